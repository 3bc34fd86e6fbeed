"""The per-load costs of arrangement.sh: the meter's 100 ms windows (``w INDEX ITERATIONS
NS CPU_NS``) placed on the marks' clock (the offset that best separates attached from
untraced windows: the meter prints no wall time), then per load the median traced window
minus the mean of the medians of the untraced windows before and after (0.3 s either side
of a bracket, 2 s of a steady state); steady states also with the lab's fast-state filter
(windows within 5 % of the state's 10th percentile). Python's standard library only."""

import statistics as st
import sys


def main(windows_file: str, marks_file: str) -> None:
    rows = [line.split() for line in open(windows_file) if line.startswith("w ")]
    speed = [int(r[3]) / int(r[2]) for r in rows]
    ends, t = [], 0.0
    for r in rows:
        t += int(r[3]) / 1e9
        ends.append(t)
    marks = [(float(a), b) for a, b in (line.split() for line in open(marks_file))]
    loads = [marks[i:i + 4] for i, (_, k) in enumerate(marks) if k == "SPAWN"]

    def placed(off):
        return [(off + (ends[k - 1] if k else 0.0), off + ends[k], speed[k])
                for k in range(len(speed))]

    def inside(w, a, b):
        return [v for s, e, v in w if s >= a and e <= b]

    def contrast(off):
        w = placed(off)
        on = [v for _, (a, _), (b, _), _ in loads for v in inside(w, a, b)]
        off_ = [v for _, _, _, (g, _) in loads for v in inside(w, g, g + 1.0)]
        return st.mean(on) - st.mean(off_) if on and off_ else 0.0

    start = marks[0][0]
    off = max((start + j * 0.001 for j in range(1500)), key=contrast)
    w = placed(off)

    def fast(x):
        p10 = sorted(x)[max(0, int(len(x) * 0.1) - 1)]
        return [v for v in x if v <= p10 * 1.05]

    short, long_ = [], []
    for (sp, _), (on, _), (stop, _), (gone, _) in loads:
        span = 0.3 if stop - on < 1 else 2.0
        before, after, traced = inside(w, sp - span, sp), inside(w, gone, gone + span), \
            inside(w, on, stop)
        if not (before and after and traced):
            continue
        cost = st.median(traced) - (st.median(before) + st.median(after)) / 2
        line = (f"attached {stop - on:.1f} s: {cost:6.1f} ns per iteration (traced "
                f"{st.median(traced):.1f}, before {st.median(before):.1f}, after "
                f"{st.median(after):.1f}, {len(traced)} windows)")
        if span > 1:
            ft, fu = fast(traced), fast(before + after)
            line += f"; fast state {st.mean(ft) - st.mean(fu):.1f}"
            long_.append(cost)
        else:
            short.append(cost)
        print(line)
    for name, c in (("brackets", short), ("steady states", long_)):
        if c:
            print(f"{name}: median {st.median(c):.1f} ns per iteration over {len(c)} loads")


if __name__ == "__main__":
    main(*sys.argv[1:3])
