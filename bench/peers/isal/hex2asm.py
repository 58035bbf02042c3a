#!/usr/bin/env python3
"""Disassemble the last C2 compile of a method from -XX:+PrintAssembly output without hsdis
(HotSpot then prints the machine code as hex words; we feed them to objdump)."""
import re, sys, subprocess, tempfile
text = open(sys.argv[1]).read()
blocks = text.split('Compiled method (c2)')
if len(blocks) < 2:
    sys.exit('no C2 compilation of the method in ' + sys.argv[1] + ' (run longer?)')
blk = blocks[-1]
mc = blk.split('[MachCode]', 1)[1]
mc = re.split(r'\n\[(Stub Code|Exception Handler|Deopt Handler)|\n-{5,}', mc)[0]
data = bytearray()
start = None
for line in mc.splitlines():
    m = re.match(r'\s*(0x[0-9a-f]+):\s*((?:[0-9a-f]{2,4}\s*\|?\s*)+)$', line)
    if not m:
        continue
    if start is None:
        start = int(m.group(1), 16)
    data += bytes.fromhex(m.group(2).replace('|', '').replace(' ', ''))
with tempfile.NamedTemporaryFile(suffix='.bin', delete=False) as f:
    f.write(data)
out = subprocess.run(['objdump', '-D', '-b', 'binary', '-mi386:x86-64', f'--adjust-vma={start:#x}', f.name],
                     capture_output=True, text=True).stdout
print(out)
