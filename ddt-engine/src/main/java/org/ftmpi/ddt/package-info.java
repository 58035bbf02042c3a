/**
 * Derived-datatype engine of FT-MPI/J (no MPI dependency): {@link org.ftmpi.ddt.Datatype} type
 * constructors and commit-time compaction into flat strided programs, and the segmented
 * {@link org.ftmpi.ddt.Convertor} that packs/unpacks one transport segment at a time in the
 * padding modes of {@link org.ftmpi.ddt.Padding} and encodings of {@link org.ftmpi.ddt.Encoding}.
 * Design: {@code docs/datatypes.md}.
 */
package org.ftmpi.ddt;
