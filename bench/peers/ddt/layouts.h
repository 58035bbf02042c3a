/* Layouts shared by pack_bench.c and DdtPackHarness.java (keep the two in sync).
 *   colN      : column of a row-major N x N double matrix: vector(N, 1, N, double)
 *   longrun   : vector(64, 1024, 2048, double): 64 runs of 1024 doubles (8 KiB)
 *   indexed   : indexed over doubles, 200 blocks, blocklen[i] = 1 + (i*7) % 13,
 *               gap before block i = 1 + (i*5) % 11 doubles
 *   struct93  : C struct of 93 fields, field i has type T[i % 6],
 *               T = {double, int, double, double, float, int}, C alignment (extent 624,
 *               560 data bytes); message = 21 records (11760 B) or 171 records (95760 B),
 *               the two sizes of seed 004 Table 1 (11956 B, 95648 B).
 */
#define IDX_BLOCKS 200
#define STRUCT_FIELDS 93
