#!/usr/bin/env python3
"""Plots the soak test's resident-memory samples as an SVG, with no plotting library.

    KILN_SOAK_SECONDS=600 KILN_SOAK_RSS_CSV=soak.csv ctest -R server_openai_client
    tools/plot_soak_rss.py soak.csv docs/soak_rss.svg --title "..."

The CSV has one row per sample: seconds, rss_kib, completed, hung_up (tests/server/test_soak.py).
The plot shows RSS in MiB over time and, on the right axis, the streams finished so far.
"""
import argparse
import csv

WIDTH, HEIGHT = 720, 360
LEFT, RIGHT, TOP, BOTTOM = 70, 80, 40, 50


def ticks(high: float, count: int = 5) -> list[float]:
    """Round tick values from 0 to at least `high`."""
    raw = high / count
    magnitude = 10 ** (len(str(int(raw))) - 1) if raw >= 1 else 1
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    return [i * step for i in range(count + 2) if i * step <= high + step]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("svg")
    parser.add_argument("--title", default="kiln serve: resident memory during the soak")
    args = parser.parse_args()

    with open(args.csv) as f:
        rows = [(float(r["seconds"]), int(r["rss_kib"]) / 1024, int(r["completed"]) + int(r["hung_up"]))
                for r in csv.DictReader(f)]
    t_ticks = ticks(max(r[0] for r in rows))
    m_ticks = ticks(max(r[1] for r in rows) * 1.1)
    s_ticks = ticks(max(r[2] for r in rows) or 1)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    x = lambda t: LEFT + t / t_ticks[-1] * plot_w
    y_mib = lambda m: TOP + plot_h - m / m_ticks[-1] * plot_h
    y_streams = lambda s: TOP + plot_h - s / s_ticks[-1] * plot_h

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
           f'<text x="{WIDTH / 2}" y="22" text-anchor="middle" font-size="14">{args.title}</text>']
    for m in m_ticks:
        out.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{y_mib(m):.1f}" y2="{y_mib(m):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{LEFT - 6}" y="{y_mib(m) + 4:.1f}" text-anchor="end">{m:g}</text>')
    for s in s_ticks:
        out.append(f'<text x="{LEFT + plot_w + 6}" y="{y_streams(s) + 4:.1f}" fill="#888">{s:g}</text>')
    for t in t_ticks:
        out.append(f'<text x="{x(t):.1f}" y="{TOP + plot_h + 18}" text-anchor="middle">{t:g}</text>')
    out.append(f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="black"/>')
    streams = " ".join(f"{x(t):.1f},{y_streams(s):.1f}" for t, _, s in rows)
    out.append(f'<polyline points="{streams}" fill="none" stroke="#888" stroke-dasharray="4 3"/>')
    rss = " ".join(f"{x(t):.1f},{y_mib(m):.1f}" for t, m, _ in rows)
    out.append(f'<polyline points="{rss}" fill="none" stroke="#c0392b" stroke-width="2"/>')
    out.append(f'<text x="{LEFT + plot_w / 2}" y="{HEIGHT - 12}" text-anchor="middle">seconds</text>')
    out.append(f'<text x="16" y="{TOP + plot_h / 2}" text-anchor="middle" '
               f'transform="rotate(-90 16 {TOP + plot_h / 2})" fill="#c0392b">RSS, MiB</text>')
    out.append(f'<text x="{WIDTH - 14}" y="{TOP + plot_h / 2}" text-anchor="middle" '
               f'transform="rotate(90 {WIDTH - 14} {TOP + plot_h / 2})" fill="#888">streams finished</text>')
    out.append("</svg>")
    with open(args.svg, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
