#!/usr/bin/env python3
"""Reorders the DT_NEEDED entries of a 64-bit little-endian ELF file in place.

    order_needed.py BINARY LIB...

The libraries named come first, in the order given (those the binary does not need are ignored); the others follow
in the order they had. Only the entries' string offsets are swapped among the DT_NEEDED slots of the dynamic
section, so nothing moves and the file keeps its size. scripts/build-release.sh uses it to have the dynamic loader
search the libraries most symbols are bound to first.
"""
import mmap
import struct
import sys

PT_LOAD, PT_DYNAMIC = 1, 2
DT_NULL, DT_NEEDED, DT_STRTAB = 0, 1, 5


def main(path, wanted):
    with open(path, "r+b") as f, mmap.mmap(f.fileno(), 0) as elf:
        if elf[:4] != b"\x7fELF" or elf[4] != 2 or elf[5] != 1:
            sys.exit(f"{path}: not a 64-bit little-endian ELF file")
        phoff, = struct.unpack_from("<Q", elf, 0x20)
        phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
        loads, dynamic = [], None
        for i in range(phnum):
            p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from("<IIQQQQ", elf, phoff + i * phentsize)
            if p_type == PT_LOAD:
                loads.append((p_vaddr, p_filesz, p_offset))
            elif p_type == PT_DYNAMIC:
                dynamic = (p_offset, p_filesz)
        if dynamic is None:
            sys.exit(f"{path}: no dynamic section")

        def file_offset(address):
            for vaddr, size, offset in loads:
                if vaddr <= address < vaddr + size:
                    return address - vaddr + offset
            sys.exit(f"{path}: address {address:#x} is in no loaded segment")

        slots, values, strtab = [], [], None
        for at in range(dynamic[0], dynamic[0] + dynamic[1], 16):
            tag, value = struct.unpack_from("<qQ", elf, at)
            if tag == DT_NULL:
                break
            if tag == DT_NEEDED:
                slots.append(at)
                values.append(value)
            elif tag == DT_STRTAB:
                strtab = file_offset(value)
        if strtab is None:
            sys.exit(f"{path}: no string table")

        def name(value):
            start = strtab + value
            return elf[start:elf.find(b"\0", start)].decode()

        names = [name(v) for v in values]
        first = [n for n in dict.fromkeys(wanted) if n in names]
        order = [names.index(n) for n in first] + [i for i, n in enumerate(names) if n not in first]
        for at, i in zip(slots, order):
            struct.pack_into("<Q", elf, at + 8, values[i])
        elf.flush()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
