"""Writes tests/data/zb_auto/reference.txt from sail-sg's reference implementation.

Run from a folder holding auto_schedule.py of sail-sg/zero-bubble-pipeline-parallelism at tag
zero-bubble-v0.1.0 (megatron/core/pipeline_parallel/auto_schedule.py):
    python3 make_reference.py > reference.txt
The file imports torch, pulp and numpy but the heuristic uses none of them: empty stand-in
modules are put on the path. Each case is random (seeded) per-stage F, B (ppsim's I), W, one
T_comm, M_B and M_W, with limits K x p x M_B; it is kept only when all eight knob settings of
initial_solution finish and place every op (the reference raises, or its final checks miss an
unplaced F, otherwise). Lines: `case p P m M comm C k K span S`, then per stage
`stage s f F i I w W mb MB mw MW`, then per stage `rank s: ...`, its order in ppsim's text IR.
"""
import os
import random
import sys
import tempfile

stubs = tempfile.mkdtemp()
for name in ("torch", "pulp", "numpy"):
    os.makedirs(os.path.join(stubs, name))
    with open(os.path.join(stubs, name, "__init__.py"), "w") as f:
        f.write("class _Any:\n    def __getattr__(self, name):\n        return _Any()\n"
                "    def __call__(self, *a, **k):\n        return _Any()\n"
                "def __getattr__(name):\n    return _Any()\n")
sys.path.insert(0, stubs)
sys.path.insert(0, os.getcwd())
import auto_schedule as R  # noqa: E402


def solve(p, m, F, B, W, c, MB, MW, K):
    config = R.GraphConfig(cost_f=F, cost_b=B, cost_w=W, cost_comm=c, mem_f=MB,
                           mem_b=[w - b for b, w in zip(MB, MW)], mem_w=[-w for w in MW],
                           max_mem=[K * p * b for b in MB])
    graph = R.Graph.build_graph(p, m, config)
    best = None
    for allow in (True, False):
        for prioritize in (True, False):
            for greedy in (True, False):
                try:
                    order, t, span = graph.manual_order(allow_bubble_before_first_b=allow,
                                                        prioritize_b=prioritize,
                                                        no_bubble_greedy=greedy)
                except Exception:
                    return None
                for s in range(p):
                    # Every F before its B: an unplaced F keeps order 0 and time 0.
                    for j in range(m):
                        if t[graph.get_id(0, s, j)] == 0 or \
                                order[graph.get_id(0, s, j)] > order[graph.get_id(1, s, j)]:
                            return None
                if best is None or span < best[0]:
                    best = (span, order)
    span, order = best
    ranks = []
    for s in range(p):
        ops = sorted((order[graph.get_id(k, s, j)], "%d%s%d" % (s, "FIW"[k], j))
                     for k in range(3) for j in range(m))
        ranks.append(" ".join(name for _, name in ops))
    return span, ranks


def main():
    random.seed(17)
    kept = 0
    print("# sail-sg/zero-bubble-pipeline-parallelism @ zero-bubble-v0.1.0, auto_schedule.py, "
          "Graph.manual_order x 8 knob settings as initial_solution; see make_reference.py")
    while kept < 40:
        p = random.randint(2, 6)
        m = random.randint(1, 16)
        F = [random.randint(1, 20) * 1000 for _ in range(p)]
        B = [random.randint(1, 20) * 1000 for _ in range(p)]
        W = [random.randint(1, 20) * 1000 for _ in range(p)]
        c = random.randint(0, 5) * 1000
        MB = [random.randint(1, 10) for _ in range(p)]
        MW = [random.randint(0, b) for b in MB]
        K = random.randint(1, 3)
        solved = solve(p, m, F, B, W, c, MB, MW, K)
        if solved is None:
            continue
        span, ranks = solved
        kept += 1
        print("case p %d m %d comm %d k %d span %d" % (p, m, c, K, span))
        for s in range(p):
            print("stage %d f %d i %d w %d mb %d mw %d" % (s, F[s], B[s], W[s], MB[s], MW[s]))
        for s in range(p):
            print("rank %d: %s" % (s, ranks[s]))


main()
