"""Writes tests/data/v_greedy/{V-Half,V-Min}.txt from sail-sg's reference implementation.

Run from a folder holding v_schedule_greedy.py of sail-sg/zero-bubble-pipeline-parallelism at tag
zero-bubble-v0.1.0 (megatron/core/pipeline_parallel/v_schedule_greedy.py; it needs no torch):
    python3 make_reference.py OUTPUT_DIR
Each block is `p P m M span S` and the P ranks' compute orders of
PipelineGraph(P, M, mem_setup, 1000, 1000, 1000, 1).get_schedule() (the call zb_schedules.py
makes), in ppsim's text IR: chunk 0 of rank r is stage r, chunk 1 is stage 2P - 1 - r, B is I.
S is max_time of the same plan's eager_execution_time at unit costs and c = 0
(schedule_from_pattern(pattern, M, [1] * 6) with c_cost = 0): the longest rank span.
"""
import contextlib
import io
import sys

import v_schedule_greedy as g

CONFIGS = [(1, 1), (1, 3), (2, 1), (2, 2), (2, 4), (2, 7), (3, 2), (3, 6), (3, 9), (4, 2),
           (4, 4), (4, 8), (4, 12), (5, 3), (5, 10), (5, 15), (6, 6), (6, 12), (6, 18), (7, 14),
           (8, 8), (8, 16), (8, 24), (8, 32)]


def orders(p, m, setup):
    with contextlib.redirect_stdout(io.StringIO()):
        nodes = g.PipelineGraph(p, m, setup, 1000, 1000, 1000, 1).get_schedule()
    lines = []
    for r, rank_nodes in enumerate(nodes):
        ops = []
        for n in rank_nodes:
            if n.type not in ('F', 'B', 'W'):
                continue
            stage = r if n.chunk == 0 else 2 * p - 1 - r
            ops.append('%d%s%d' % (stage, {'F': 'F', 'B': 'I', 'W': 'W'}[n.type], n.minibatch))
        lines.append('rank %d: %s' % (r, ' '.join(ops)))
    return lines


def span(p, m, setup):
    graph = g.PipelineGraph(p, m, setup, 1, 1, 1, 0)
    pattern = {'half': graph.stable_pattern_v_half, 'min': graph.stable_pattern_v_min}[setup](p)
    with contextlib.redirect_stdout(io.StringIO()):
        max_time, _, _ = graph.schedule_from_pattern(pattern, m, [1] * 6, do_reorder=True)
    return max_time


def main(out_dir):
    for name, setup in (('V-Half', 'half'), ('V-Min', 'min')):
        with open('%s/%s.txt' % (out_dir, name), 'w') as f:
            f.write('# %s: sail-sg/zero-bubble-pipeline-parallelism @ zero-bubble-v0.1.0, '
                    'v_schedule_greedy.py, PipelineGraph(p, m, "%s", 1000, 1000, 1000, 1)'
                    '.get_schedule(); see README.\n' % (name, setup))
            for p, m in CONFIGS:
                f.write('p %d m %d span %d\n' % (p, m, span(p, m, setup)))
                f.write('\n'.join(orders(p, m, setup)) + '\n')


if __name__ == '__main__':
    main(sys.argv[1])
