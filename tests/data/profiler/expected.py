# Independent computation of `ppsim profile`'s documented rules (interop/trace_profile.h) over
# the CPU fixtures, for the expected values of tests/interop/kineto_trace_test.cc:
#   python3 expected.py cpu_1f1b rank0.pt.trace.json.gz rank1.pt.trace.json.gz
import json, gzip, math, sys, re
def union(iv):
    iv=sorted(iv); tot=0; s=e=None
    for a,b in iv:
        if s is None or a>e:
            if s is not None: tot+=e-s
            s,e=a,b
        else: e=max(e,b)
    return tot+(e-s if s is not None else 0)
def median(v):
    v=sorted(v); n=len(v)
    return v[n//2] if n%2 else (v[n//2-1]+v[n//2])/2
def p10(v):
    v=sorted(v); k=math.ceil(0.1*len(v)); return v[max(k,1)-1]
def run(folder, files):
    ranks=[json.load(gzip.open(f'{folder}/{f}')) for f in files]
    stepdur={}
    samples={}; waits=[]
    for r,ev in enumerate(ranks):
        st=sorted([e for e in ev if e['name'].startswith('ProfilerStep#')], key=lambda e:e['ts'])
        for e in st: stepdur.setdefault(e['name'],[]).append(e['dur'])
        steady=[(e['ts'],e['ts']+e['dur']) for e in st[1:]]
        acts=sorted([e for e in ev if re.fullmatch(r'PP:\d+(F|B|SEND_F|SEND_B)\d+|(Forward|Backward) \d+', e['name'])], key=lambda e:e['ts'])
        recvs=[e for e in ev if re.match(r'(gloo:|nccl:|c10d::).*recv', e['name'])]
        for i,a in enumerate(acts):
            m=re.fullmatch(r'PP:(\d+)(F|B)(\d+)', a['name']) or re.fullmatch(r'(Forward|Backward) (\d+)', a['name'])
            if not m: continue
            if not any(s<=a['ts']<=e for s,e in steady): continue
            if m.group(1) in ('Forward','Backward'): stage, kind = r, m.group(1)[0]
            else: stage, kind = int(m.group(1)), m.group(2)
            end=a['ts']+a['dur']
            # the action holding a recv's start: the latest-starting action with start <= t <= end
            w=union([(x['ts'], min(x['ts']+x['dur'], end)) for x in recvs
                      if a['ts']<=x['ts']<=end and not any(b['ts']>a['ts'] and b['ts']<=x['ts']<=b['ts']+b['dur'] for b in acts)])
            t=a['dur']-w
            for b in acts[i+1:i+3]:
                if b['name']==f'PP:{stage}SEND_{kind}{m.group(3) if m.group(1).isdigit() else ""}': t+=b['dur']
            samples.setdefault((stage,kind),[]).append(t)
            if w>0: waits.append(w)
    names=list(stepdur)
    steps={n:median(v) for n,v in stepdur.items()}
    print(folder, 'steps us', steps, 'median steady', median([steps[n] for n in names[1:]]))
    for k in sorted(samples): print(' ', k, len(samples[k]), 'median us', median(samples[k]), 'mean', sum(sorted(samples[k]))/len(samples[k]), 'min', min(samples[k]), 'max', max(samples[k]))
    steady_steps=[steps[n] for n in names[1:]]
    print('  mean steady step us', sum(sorted(steady_steps))/len(steady_steps))
    # Outside the actions: per steady step, per rank (step start to first action start) + (last
    # action end to step end) over every PP:/Forward/Backward range, the least over ranks.
    least={}
    for ev in ranks:
        st=sorted([e for e in ev if e['name'].startswith('ProfilerStep#')], key=lambda e:e['ts'])
        acts=[e for e in ev if re.fullmatch(r'PP:.*|(Forward|Backward) \d+', e['name'])]
        for s in st[1:]:
            inside=[a for a in acts if s['ts']<=a['ts']<=s['ts']+s['dur']]
            if not inside: continue
            out=max(0,min(a['ts'] for a in inside)-s['ts'])+max(0,s['ts']+s['dur']-max(a['ts']+a['dur'] for a in inside))
            least[s['name']]=min(least.get(s['name'],out),out)
    v=sorted(least.values()); print('  outside the actions us, per step', least, 'mean', sum(v)/len(v))
    print('  p2p p10 us', p10(waits), len(waits))
run(sys.argv[1], sys.argv[2:])
