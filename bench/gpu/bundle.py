#!/usr/bin/env python3
"""Packs orb-player with every shared library it loads into one folder that runs on another x86-64 Linux machine
which has a GPU but none of the player's packages (no GTK, no FFmpeg), so the renderer can be measured there:

    bench/gpu/bundle.py BINARY OUT_DIR [--stub SONAME ...] [--add SONAME ...]

OUT_DIR gets bin/orb-player (stripped), lib/ (the libraries, the dynamic loader ld-linux-x86-64.so.2 among them, so
the other machine's C library does not matter) and lib/STUBS (the libraries replaced). Run the player there as
`lib/ld-linux-x86-64.so.2 --library-path lib:DRIVER_DIRS bin/orb-player ...` (bench/gpu/run.sh does).

A library named with --stub is replaced by a stand-in with the same soname, symbols and symbol versions, whose
functions all return 0 and whose data is zeroed: the loader is satisfied, and FFmpeg's start-up questions (libaom's
version, libvpx's capabilities, asked as FFmpeg lists its codecs) get "nothing". Stand-ins are for what the
headless modes never use: the encoders and the decoders of formats other than the ones measured (libx265,
libcodec2, ...). The libraries that only a stand-in needed are left out too. A library named with --add is packed
too (with what it needs), though the binary does not load it: one a GPU driver there may need (GLVND's libEGL for
NVIDIA's Vulkan driver). Reads ELF with readelf (binutils); builds stand-ins with cc.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile


def run(*args):
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"bundle: {' '.join(args)} failed:\n{done.stderr}")
    return done.stdout


def needed(path):
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", run("readelf", "-dW", path))


def soname_map():
    # ldconfig -p: "\tlibfoo.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libfoo.so.1"
    found = {}
    for line in run("ldconfig", "-p").splitlines():
        m = re.match(r"\s+(\S+) \(([^)]*)\) => (\S+)", line)
        if m and "x86-64" in m.group(2) and m.group(1) not in found:
            found[m.group(1)] = m.group(3)
    return found


def closure(binary, libs, stubs, added):
    """The sonames the binary loads (and `added`), following NEEDED but not into stand-ins."""
    seen, todo = [], list(needed(binary)) + added
    while todo:
        name = todo.pop(0)
        if name in seen:
            continue
        seen.append(name)
        if name in stubs:
            continue
        if name not in libs:
            sys.exit(f"bundle: {name} is not in ldconfig's cache")
        todo += needed(libs[name])
    return seen


SYM = re.compile(r"^\s*\d+:\s+[0-9a-f]+\s+(\d+|0x[0-9a-f]+)\s+(\w+)\s+(\w+)\s+\w+\s+(\w+)\s+(\S+)")


def stub(soname, path, out_dir, work):
    """A stand-in for `path`: its defined dynamic symbols (functions return 0, data is zeroed), versions kept."""
    funcs, objects, versions = [], [], set()
    for line in run("readelf", "--dyn-syms", "-W", path).splitlines():
        m = SYM.match(line)
        if not m:
            continue
        size, kind, bind, ndx, name = m.groups()
        if ndx in ("UND", "ABS") or bind not in ("GLOBAL", "WEAK") or kind not in ("FUNC", "OBJECT", "IFUNC", "TLS"):
            continue
        base, default, version = re.match(r"([^@]+)(@@|@)?(.*)", name).groups()
        if version:
            versions.add(version)
        entry = (base, default, version, int(size, 0))
        (funcs if kind in ("FUNC", "IFUNC") else objects).append((kind,) + entry)
    c = []
    for i, (kind, base, default, version, size) in enumerate(funcs + objects):
        local = f"orb_stub_{i}" if version else base
        if kind in ("FUNC", "IFUNC"):
            c.append(f"long {local}(void) {{ return 0; }}")
        else:
            tls = "__thread " if kind == "TLS" else ""
            c.append(f"{tls}char {local}[{max(size, 1)}] __attribute__((aligned(16)));")
        if version:
            c.append(f'__asm__(".symver {local}, {base}{default}{version}");')
    src = os.path.join(work, soname + ".c")
    with open(src, "w") as f:
        f.write("\n".join(c) + "\n")
    args = ["cc", "-shared", "-fPIC", "-O0", "-w", f"-Wl,-soname,{soname}", "-o", os.path.join(out_dir, soname), src]
    if versions:
        script = os.path.join(work, soname + ".map")
        with open(script, "w") as f:
            f.write("".join(f"{v} {{ }};\n" for v in sorted(versions)))
        args.insert(-1, f"-Wl,--version-script={script}")
    run(*args)


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    binary, out = args[0], args[1]
    stubs, added = set(), []
    rest = args[2:]
    while rest:
        flag, _, value = rest.pop(0).partition("=")
        if not value and rest:
            value = rest.pop(0)
        if flag not in ("--stub", "--add") or not value:
            sys.exit(f"bundle: unexpected argument {flag}")
        (stubs.add if flag == "--stub" else added.append)(value)
    libs = soname_map()
    names = closure(binary, libs, stubs, added)
    lib_dir = os.path.join(out, "lib")
    os.makedirs(os.path.join(out, "bin"), exist_ok=True)
    os.makedirs(lib_dir, exist_ok=True)
    run("strip", "-o", os.path.join(out, "bin", "orb-player"), binary)
    with tempfile.TemporaryDirectory() as work:
        for name in names:
            if name in stubs:
                stub(name, libs[name], lib_dir, work)
            else:
                shutil.copy2(os.path.realpath(libs[name]), os.path.join(lib_dir, name))
    with open(os.path.join(lib_dir, "STUBS"), "w") as f:
        f.write("".join(f"{s}\n" for s in sorted(stubs & set(names))))
    unused = sorted(stubs - set(names))
    if unused:
        print(f"bundle: not loaded, so not stubbed: {' '.join(unused)}", file=sys.stderr)
    print(f"bundle: {len(names)} libraries ({len(stubs & set(names))} stand-ins) in {lib_dir}", file=sys.stderr)


if __name__ == "__main__":
    main()
