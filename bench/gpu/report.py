#!/usr/bin/env python3
"""What bench/gpu/run.sh brought back from a GPU machine, as Markdown:

    bench/gpu/report.py DEVICE_OUT [BUNDLE.tar.xz] [BINARY]

1. `--benchmark`: the median run of each clip and size (frames a second, CPU seconds, peak RSS), and for each clip
   the frame rate at 1280x720 against the rate at 16x16, where almost nothing is drawn: how much drawing costs.
2. The stills: each one drawn again here, by BINARY (default .build/release/orb-player) from the bundle's own clips
   (BUNDLE defaults to .gpu/orb-gpu.tar.xz) with this machine's Vulkan device, and the two compared channel by
   channel (alpha left out): the largest difference in 8-bit codes, the mean, and the share of values more than 2
   codes apart. Needs ffmpeg (PNG to raw RGBA). Exits 1 if a still is missing here or sizes differ.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile


def benchmark_table(out):
    runs = {}
    with open(os.path.join(out, "bench.jsonl")) as f:
        for line in f:
            row = json.loads(line)
            runs.setdefault((row["clip"], row["size"]), []).append(row["result"])
    device = next(iter(runs.values()))[0]["device"] if runs else "?"
    print(f"### `--benchmark` on {device} (median of {max(map(len, runs.values()), default=0)} runs)\n")
    print("| clip | size | frames | fps | CPU s | peak RSS MB |")
    print("| --- | --- | --- | --- | --- | --- |")
    medians = {}
    for (clip, size), results in runs.items():
        fps = statistics.median(r["fps"] for r in results)
        medians[(clip, size)] = fps
        cpu = statistics.median(r["cpu_seconds"] for r in results)
        rss = statistics.median(r["peak_rss_mb"] for r in results)
        print(f"| {clip} | {size} | {results[0]['frames']} | {fps:.0f} | {cpu:.2f} | {rss:.0f} |")
    print("\nDrawing's cost: frames a second at each size over those at 16x16 (1.00: drawing costs nothing)\n")
    for (clip, size), fps in medians.items():
        floor = medians.get((clip, "16x16"))
        if size != "16x16" and floor:
            print(f"- {clip} at {size}: {fps / floor:.2f}")


def rgba(png):
    return subprocess.run(
        ["ffmpeg", "-v", "error", "-i", png, "-f", "rawvideo", "-pix_fmt", "rgba", "-"],
        check=True, capture_output=True).stdout


def stills_table(out, bundle, binary):
    with open(os.path.join(out, "log.txt")) as f:
        stills = [line.split()[1:] for line in f if line.startswith("still ") and len(line.split()) == 5]
    print("\n### Stills: the GPU's against this machine's Vulkan device, 8-bit codes of R, G and B\n")
    print("| still | clip at s | size | largest | mean | share > 2 |")
    print("| --- | --- | --- | --- | --- | --- |")
    failed = False
    with tempfile.TemporaryDirectory() as work:
        subprocess.run(["tar", "-xJf", bundle, "-C", work, "./media"], check=True)
        for png, clip, seconds, size in stills:
            here = os.path.join(work, png)
            drawn = subprocess.run(
                [binary, "--frame-at", seconds, "--size", size, "--output", here, os.path.join(work, "media", clip)],
                capture_output=True, text=True)
            if drawn.returncode != 0:
                print(f"| {png} | {clip} at {seconds} | {size} | not drawn here: {drawn.stderr.strip()} | | |")
                failed = True
                continue
            a, b = rgba(os.path.join(out, png)), rgba(here)
            if len(a) != len(b):
                print(f"| {png} | {clip} at {seconds} | {size} | sizes differ | | |")
                failed = True
                continue
            diffs = [abs(x - y) for i, (x, y) in enumerate(zip(a, b)) if i % 4 != 3]
            far = sum(1 for d in diffs if d > 2)
            print(f"| {png} | {clip} at {seconds} | {size} | {max(diffs)} | {sum(diffs) / len(diffs):.3f} | "
                  f"{100 * far / len(diffs):.3f} % |")
    return not failed


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    bundle = sys.argv[2] if len(sys.argv) > 2 else ".gpu/orb-gpu.tar.xz"
    binary = sys.argv[3] if len(sys.argv) > 3 else ".build/release/orb-player"
    benchmark_table(out)
    sys.exit(0 if stills_table(out, bundle, binary) else 1)


if __name__ == "__main__":
    main()
