// The explorer page: a form built from GET /api/fields (the run request's own description), a
// POST /api/run after each change (the older request cancelled, here and on the server through
// X-Ppsim-Page), the comparison, memory lanes, exposed communication and the timeline of the
// chosen schedule. The state lives in the address: ?pp=8&schedule=1F1B,GPipe...
'use strict';

const PAGE = Math.random().toString(36).slice(2) + Date.now().toString(36);
// Llama 3 70B on 64 H100s, three schedules side by side: what a first visit shows.
const DEFAULTS = {
  schedule: '1F1B,Interleaved1F1B,ZB-H1', pp: '8', tp: '8', microbatches: '32',
  model: 'llama3-70b', platform: 'dgx-h100', nodes: '8', sequence_parallel: 'true',
};
// Fields the form shows first, open; the others are in their group, closed.
const ESSENTIAL = ['pp', 'microbatches', 'global_batch', 'stages_per_rank', 'model', 'seq_len',
  'microbatch_size', 'recompute', 'platform', 'nodes', 'tp', 'dp', 'cp', 'ep', 'zero'];
// Outputs the server answers itself (the JSON, the timeline, the launch) are not fields here.
const HIDDEN = ['schedule', 'format', 'trace', 'chrome_trace', 'timeline', 'trace_microbatches',
  'emit', 'emit_file'];
const GROUPS = {SCHEDULE: 'Schedule', COSTS: 'Costs', MODEL: 'Model', CLUSTER: 'Cluster',
  PARALLELISM: 'Parallelism', OUTPUTS: 'Workload and outputs', LIMITS: 'Limits'};
const MEMORY_PARTS = [
  ['weights_bytes', 'weights', '#4a78c2'], ['gradients_bytes', 'gradients', '#7aa0dc'],
  ['optimizer_state_bytes', 'optimizer state', '#9a7ac9'], ['unsplit_static_bytes', 'unsplit', '#b9a3dc'],
  ['activations_bytes', 'activations', '#e08a3c'], ['fragmentation_bytes', 'allocator overhead', '#f0b982'],
  ['fixed_reserve_bytes', 'CUDA context and NCCL', '#a0a6b3'],
];
// Each bubble metric as it is defined (README, What the numbers mean).
const DEFINITIONS = {
  bubble_over_makespan: '1 − Σbusy / (ranks · makespan): the share of all GPU time spent idle.',
  bubble_over_ideal: '(ranks · makespan − Σbusy) / Σbusy: idle time over busy time; Megatron\'s (p−1)/m for 1F1B.',
  stage_bubble_rate: '(S − busy of a rank) / S, S the largest span of any rank: the zero-bubble paper\'s measure.',
  makespan_s: 'earliest start to latest end of any task, compute or transfer, in one iteration.',
  mfu: 'model FLOPs per second over the GPUs\' peak: the model\'s useful work only.',
};

let fields = [];
let presets = {};
let running = null;
let serial = 0;
let timelineRunning = null;
let lastBody = null;

const $ = (id) => document.getElementById(id);

function setStatus(text) { $('status').textContent = text; }

function element(tag, attributes, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attributes || {})) {
    if (k === 'class') e.className = v; else if (k === 'text') e.textContent = v; else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c);
  return e;
}

function initialState() {
  const query = new URLSearchParams(location.search);
  if ([...query.keys()].length === 0) return {...DEFAULTS};
  const state = {};
  for (const [k, v] of query) state[k] = v;
  return state;
}

function inputFor(field, value) {
  const id = 'f-' + field.field;
  let input;
  if (field.type === 'switch') {
    input = element('input', {type: 'checkbox', id});
    input.checked = value === 'true';
  } else if (presets[field.field]) {
    input = element('select', {id});
    for (const name of ['', ...presets[field.field]]) {
      input.append(element('option', {value: name, text: name || '(none)'}));
    }
    if (value && !presets[field.field].includes(value)) input.append(element('option', {value, text: value}));
    input.value = value || '';
  } else if (field.field === 'megatron' || field.type === 'list') {
    input = element('textarea', {id, placeholder: field.type === 'list' ? 'one PATH=VALUE per line' : '--tensor-model-parallel-size 8 ...'});
    input.value = field.type === 'list' ? (value || '').split(',').filter(Boolean).join('\n') : value || '';
  } else {
    input = element('input', {type: 'text', id, placeholder: field.value_name});
    input.value = value || '';
  }
  input.dataset.field = field.field;
  input.title = field.help;
  return input;
}

function fieldRow(field, value) {
  const row = element('div', {class: 'field'});
  const label = element('label', {for: 'f-' + field.field, text: field.field, title: field.flag + ': ' + field.help});
  const input = inputFor(field, value);
  const cell = element('div', {}, input);
  if (field.file) {
    const chooser = element('input', {type: 'file', 'aria-label': 'upload ' + field.field});
    chooser.addEventListener('change', () => upload(chooser, input, field));
    cell.append(chooser);
  }
  row.append(label, cell);
  return row;
}

async function upload(chooser, input, field) {
  const file = chooser.files[0];
  if (!file) return;
  const name = file.name.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '') || 'upload';
  const r = await fetch('/api/upload?name=' + encodeURIComponent(name), {method: 'POST', body: file});
  const answer = await r.json();
  if (!r.ok) return showError(answer.error);
  const value = field.field === 'megatron' ? '@' + answer.field_value : answer.field_value;
  if (input.tagName === 'SELECT') input.append(element('option', {value, text: value}));
  input.value = value;
  changed();
}

function buildForm(state) {
  const chips = $('schedules');
  const chosen = (state.schedule || '').split(',').filter(Boolean);
  for (const name of presets.schedule) {
    const box = element('input', {type: 'checkbox', value: name});
    box.checked = chosen.includes(name);
    const label = element('label', {class: box.checked ? 'on' : '', title: 'compare ' + name}, box, name);
    box.addEventListener('change', () => { label.classList.toggle('on', box.checked); changed(); });
    chips.append(label);
  }
  const container = $('fields');
  const essential = element('fieldset', {}, element('legend', {text: 'Essentials'}));
  for (const name of ESSENTIAL) {
    const field = fields.find((f) => f.field === name);
    if (field) essential.append(fieldRow(field, state[name]));
  }
  container.append(essential);
  for (const [group, caption] of Object.entries(GROUPS)) {
    const set = element('fieldset', {class: 'closed'});
    const legend = element('legend', {text: caption + ' ▸'});
    legend.addEventListener('click', () => set.classList.toggle('closed'));
    set.append(legend);
    let any = false;
    for (const field of fields) {
      if (field.group !== group || HIDDEN.includes(field.field) || ESSENTIAL.includes(field.field) || field.output) continue;
      set.append(fieldRow(field, state[field.field]));
      if (state[field.field]) set.classList.remove('closed');
      any = true;
    }
    if (any) container.append(set);
  }
  $('form').addEventListener('input', changed);
  $('form').addEventListener('change', changed);
}

function readState() {
  const state = {};
  const schedules = [...document.querySelectorAll('#schedules input:checked')].map((b) => b.value);
  if (schedules.length) state.schedule = schedules.join(',');
  for (const input of document.querySelectorAll('[data-field]')) {
    const name = input.dataset.field;
    if (input.type === 'checkbox') {
      if (input.checked) state[name] = 'true';
    } else if (input.value.trim() !== '') {
      state[name] = input.tagName === 'TEXTAREA' && name === 'set'
        ? input.value.split('\n').map((s) => s.trim()).filter(Boolean).join(',') : input.value.trim();
    }
  }
  return state;
}

function bodyOf(state) {
  const body = {};
  for (const [name, value] of Object.entries(state)) {
    const field = fields.find((f) => f.field === name);
    if (!field) continue;
    if (field.type === 'switch') body[name] = value === 'true';
    else if (field.type === 'list') body[name] = value.split(',').filter(Boolean);
    else body[name] = value;
  }
  return body;
}

let timer = null;
function changed() {
  clearTimeout(timer);
  timer = setTimeout(update, 120);
}

function showError(message) {
  const box = $('error');
  box.hidden = !message;
  box.textContent = message || '';
}

async function post(path, body, page, signal) {
  const r = await fetch(path, {method: 'POST', headers: {'Content-Type': 'application/json', 'X-Ppsim-Page': page},
    body: JSON.stringify(body), signal});
  return {status: r.status, ok: r.ok, text: await r.text()};
}

async function update() {
  const state = readState();
  history.replaceState(null, '', '?' + new URLSearchParams(state).toString() + location.hash);
  document.body.dataset.url = location.search;
  const body = bodyOf(state);
  if (running) running.abort();
  running = new AbortController();
  const mine = ++serial;
  const start = performance.now();
  setStatus('simulating…');
  document.body.dataset.state = 'busy';
  try {
    const answer = await post('/api/run', body, PAGE, running.signal);
    if (mine !== serial || answer.status === 409) return;
    if (!answer.ok) {
      showError(JSON.parse(answer.text).error);
      setStatus('not simulated: see the message');
      document.body.dataset.state = 'error';
      return;
    }
    showError('');
    const data = JSON.parse(answer.text);
    const runs = Array.isArray(data) ? data : [data];
    render(runs);
    lastBody = body;
    setStatus(`${runs.length} run${runs.length > 1 ? 's' : ''} simulated in ${Math.round(performance.now() - start)} ms`);
    document.body.dataset.state = 'ready';
    drawTimeline(body, runs);
    thenChange();
  } catch (e) {
    if (e.name !== 'AbortError') showError(String(e));
  }
}

const GiB = 1024 ** 3;
const ROWS = [
  ['makespan_s', 'makespan', (v) => formatSeconds(v), 'min'],
  ['bubble_over_makespan', 'bubble over makespan', (v) => pct(v), 'min'],
  ['bubble_over_ideal', 'bubble over ideal', (v) => pct(v), 'min'],
  ['stage_bubble_rate', 'stage bubble rate', (v) => pct(v), 'min'],
  ['tokens_per_s', 'tokens/s', (v) => Math.round(v).toLocaleString('en-US'), 'max'],
  ['samples_per_s', 'samples/s', (v) => v.toPrecision(4), 'max'],
  ['mfu', 'MFU', (v) => pct(v), 'max'],
  ['peak_memory_bytes', 'peak memory', (v) => (v / GiB).toFixed(1) + ' GiB', 'min'],
];

function pct(v) { return (100 * v).toFixed(1) + '%'; }
function formatSeconds(v) { return v >= 1 ? v.toFixed(3) + ' s' : (1000 * v).toFixed(2) + ' ms'; }

function render(runs) {
  const table = $('compare');
  table.replaceChildren();
  const head = element('tr', {}, element('th', {text: 'metric'}));
  for (const run of runs) head.append(element('th', {text: run.schedule}));
  table.append(head);
  for (const [key, caption, format, better] of ROWS) {
    const values = runs.map((r) => r[key]);
    if (values.every((v) => v === undefined)) continue;
    const known = values.filter((v) => v !== undefined);
    const best = better === 'min' ? Math.min(...known) : Math.max(...known);
    const row = element('tr', {}, element('td', {text: caption, title: DEFINITIONS[key] || ''}));
    runs.forEach((run, k) => {
      const v = values[k];
      const cell = element('td', {text: v === undefined ? '—' : format(v)});
      if (runs.length > 1 && v === best) cell.classList.add('best');
      if (key === 'peak_memory_bytes' && run.oom) { cell.classList.add('oom'); cell.textContent += ' (OOM)'; }
      row.append(cell);
    });
    table.append(row);
  }
  const dl = $('definitions');
  dl.replaceChildren();
  for (const [key, text] of Object.entries(DEFINITIONS)) {
    dl.append(element('dt', {text: key}), element('dd', {text}));
  }
  renderMemory(runs);
  renderCommunication(runs);
  const select = $('timeline-of');
  const previous = select.value;
  select.replaceChildren(...runs.map((r) => element('option', {value: r.schedule, text: r.schedule})));
  if (runs.some((r) => r.schedule === previous)) select.value = previous;
}

function renderMemory(runs) {
  const box = $('memory');
  box.replaceChildren();
  const legend = element('div', {class: 'legend'});
  for (const [, caption, color] of MEMORY_PARTS) {
    legend.append(element('span', {}, element('i', {style: 'background:' + color}), caption));
  }
  legend.append(element('span', {}, element('i', {style: 'background:#c22'}), 'capacity'));
  box.append(legend);
  let scale = 1;
  for (const run of runs) for (const rank of run.ranks || []) {
    scale = Math.max(scale, rank.peak_memory_bytes || 0, rank.memory_capacity_bytes || 0);
  }
  for (const run of runs) {
    const lanes = element('div', {class: 'lanes'}, element('h3', {text: run.schedule + (run.oom ? ' — out of memory' : '')}));
    for (const rank of run.ranks || []) {
      const bar = element('div', {class: 'bar'});
      let left = 0;
      for (const [key, caption, color] of MEMORY_PARTS) {
        const bytes = (rank.memory || {})[key] || 0;
        if (bytes <= 0) continue;
        const width = 100 * bytes / scale;
        bar.append(element('span', {style: `left:${left}%;width:${width}%;background:${color}`, title: `${caption}: ${(bytes / GiB).toFixed(2)} GiB`}));
        left += width;
      }
      if (rank.memory_capacity_bytes) {
        bar.append(element('i', {class: 'cap', style: `left:${100 * rank.memory_capacity_bytes / scale}%`}));
      }
      const label = `${(rank.peak_memory_bytes / GiB).toFixed(1)}` +
        (rank.memory_capacity_bytes ? ` / ${(rank.memory_capacity_bytes / GiB).toFixed(0)} GiB` : ' GiB');
      lanes.append(element('div', {class: 'lane'}, element('span', {text: 'rank ' + rank.rank}), bar, element('span', {text: label})));
    }
    box.append(lanes);
  }
}

function renderCommunication(runs) {
  const box = $('comm');
  box.replaceChildren();
  box.append(element('div', {class: 'legend'},
    element('span', {}, element('i', {style: 'background:#d9534f'}), 'exposed'),
    element('span', {}, element('i', {style: 'background:#c9d6ee'}), 'total in flight')));
  let scale = 1e-12;
  for (const run of runs) for (const c of Object.values(run.communication || {})) scale = Math.max(scale, c.total_s);
  for (const run of runs) {
    const lanes = element('div', {class: 'lanes'}, element('h3', {text: run.schedule}));
    const kinds = Object.entries(run.communication || {});
    if (kinds.length === 0) lanes.append(element('p', {class: 'hint', text: 'no communication'}));
    for (const [kind, c] of kinds) {
      const bar = element('div', {class: 'bar'},
        element('span', {style: `left:0;width:${100 * c.total_s / scale}%;background:#c9d6ee`, title: 'total ' + formatSeconds(c.total_s)}),
        element('span', {style: `left:0;width:${100 * c.exposed_s / scale}%;background:#d9534f`, title: 'exposed ' + formatSeconds(c.exposed_s)}));
      lanes.append(element('div', {class: 'lane'}, element('span', {text: kind}), bar,
        element('span', {text: `${formatSeconds(c.exposed_s)} of ${formatSeconds(c.total_s)}`})));
    }
    box.append(lanes);
  }
}

// For tests: #then:FIELD=VALUE in the address changes that field once the first result is in, as
// typing into it would; the first result's table stays in data-first.
function thenChange() {
  const change = /^#then:([a-z_]+)=(.*)$/.exec(location.hash);
  if (!change || document.body.dataset.first) return;
  document.body.dataset.first = $('compare').textContent;
  const input = document.querySelector(`[data-field="${change[1]}"]`);
  if (!input) return;
  input.value = decodeURIComponent(change[2]);
  input.dispatchEvent(new Event('input', {bubbles: true}));
}

async function drawTimeline(body, runs) {
  const schedule = $('timeline-of').value || runs[0].schedule;
  if (timelineRunning) timelineRunning.abort();
  timelineRunning = new AbortController();
  try {
    const answer = await post('/api/timeline', {...body, schedule}, PAGE + '-timeline', timelineRunning.signal);
    if (answer.ok) $('timeline').srcdoc = answer.text;
  } catch (e) {
    if (e.name !== 'AbortError') showError(String(e));
  }
}

async function copyAs(kind) {
  if (!lastBody) return;
  const answer = await post('/api/command', lastBody, PAGE + '-command');
  const data = JSON.parse(answer.text);
  if (!answer.ok) return showError(data.error);
  const part = data[kind];
  const text = typeof part === 'string' ? part : part.error ? part.error : part.text + '\n# import back: ' + part.import_command;
  const shown = $('copied');
  shown.hidden = false;
  shown.textContent = text;
  shown.dataset.kind = kind;
  try { await navigator.clipboard.writeText(text); setStatus('copied as ' + kind); } catch (e) { setStatus('shown below (the clipboard is not available)'); }
}

async function start() {
  const r = await fetch('/api/fields');
  const description = await r.json();
  fields = description.fields;
  presets = description.presets;
  buildForm(initialState());
  for (const b of document.querySelectorAll('[data-copy]')) b.addEventListener('click', () => copyAs(b.dataset.copy));
  $('timeline-of').addEventListener('change', () => lastBody && drawTimeline(lastBody, []));
  update();
}

start();
