(function () {
  'use strict';
  const svg = document.querySelector('svg.timeline');
  const wrap = document.getElementById('wrap');
  const tip = document.getElementById('tip');
  const status = document.getElementById('view');
  const NS = svg.namespaceURI;
  const d = svg.dataset;
  const L = +d.plotX, W0 = +d.plotW, R = +d.right, end = Math.max(1, +d.endNs);
  const top = +d.plotTop, bottom = +d.plotBottom, axisY = +d.axisY;
  const charPx = 0.64 * 11, pad = 2;
  const units = [[1, 'ns'], [1e3, '\u00b5s'], [1e6, 'ms'], [1e9, 's']];
  // Plain SVG viewers show <title>; here the tooltip does, so the texts move to data-d.
  for (const t of Array.from(svg.querySelectorAll('title'))) {
    t.parentNode.dataset.d = t.textContent;
    t.remove();
  }
  // Boxes and transfers; a transfer stays at least a pixel wide so that short ones show.
  const boxes = Array.from(svg.querySelectorAll('rect.box, rect.xfer'), function (r) {
    const l = r.nextElementSibling;
    return {r: r, s: +r.dataset.s, e: +r.dataset.e, min: r.classList.contains('xfer') ? 1 : 0,
            label: l && l.classList.contains('mb') ? l : null};
  });
  // The dependencies' arrows: from a producer's end to its consumer's start.
  const flows = Array.from(svg.querySelectorAll('line.flow'), function (l) {
    return {l: l, s: +l.dataset.s, e: +l.dataset.e};
  });
  const axis = svg.querySelector('g.axis'), grid = svg.querySelector('g.grid');
  let t0 = 0, t1 = end, W = W0, pending = false;

  function add(parent, name, attrs, text) {
    const e = document.createElementNS(NS, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return parent.appendChild(e);
  }
  function ticks(k) {
    const span = t1 - t0;
    let u = units[0];
    for (const c of units) if (span >= c[0]) u = c;
    for (let e = Math.floor(Math.log10(span / u[0])) - 3; e < 30; e++) {
      for (const m of [1, 2, 5]) {
        const step = m * Math.pow(10, e), dec = Math.max(0, -e);
        if (step * u[0] < 1) continue;
        const first = Math.ceil(t0 / u[0] / step - 1e-9);
        const last = Math.floor(t1 / u[0] / step + 1e-9);
        const list = [];
        let widest = 0;
        for (let i = first; i <= last; i++) {
          const text = (i * step).toFixed(dec);
          list.push([i * step * u[0], text]);
          widest = Math.max(widest, text.length * charPx);
        }
        if (step * u[0] * k >= Math.max(60, widest + 12)) return {unit: u[1], list: list};
      }
    }
  }
  function draw() {
    pending = false;
    const k = W / (t1 - t0), x = function (t) { return L + (t - t0) * k; };
    for (const b of boxes) {
      const x0 = x(b.s), w = Math.max(b.min, x(b.e) - x0);
      b.r.setAttribute('x', x0.toFixed(1));
      b.r.setAttribute('width', w.toFixed(1));
      if (!b.label) continue;
      const fits = w >= b.label.textContent.length * charPx + 2 * pad;
      b.label.setAttribute('visibility', fits ? 'visible' : 'hidden');
      if (fits) b.label.setAttribute('x', (x0 + w / 2).toFixed(1));
    }
    for (const f of flows) {
      f.l.setAttribute('x1', x(f.s).toFixed(1));
      f.l.setAttribute('x2', x(f.e).toFixed(1));
    }
    // The memory paths were written for a plot W0 wide showing [0, end].
    const a = end * k / W0;
    svg.querySelectorAll('path.mem').forEach(function (p) {
      p.setAttribute('transform', 'matrix(' + a + ' 0 0 1 ' + (L - L * a - t0 * k) + ' 0)');
    });
    svg.querySelectorAll('text.peak, text.capacity').forEach(function (p) {
      p.setAttribute('x', L + W + 6);
    });
    svg.querySelectorAll('line.row-line, line.capacity').forEach(function (l) {
      l.setAttribute('x2', L + W);
    });
    svg.querySelector('#plot-clip rect').setAttribute('width', W);
    const t = ticks(k);
    axis.textContent = '';
    grid.textContent = '';
    add(axis, 'line', {x1: L, x2: L + W, y1: axisY, y2: axisY, stroke: '#555'});
    for (const [ns, text] of t.list) {
      const tx = x(ns).toFixed(1);
      add(grid, 'line', {x1: tx, x2: tx, y1: top, y2: bottom});
      add(axis, 'line', {x1: tx, x2: tx, y1: axisY, y2: axisY + 5, stroke: '#555'});
      add(axis, 'text', {class: 'tick', x: tx, y: axisY + 17}, text);
    }
    add(axis, 'text', {class: 'axis-title', x: L + W / 2, y: axisY + 35, 'font-size': 12},
        'time (' + t.unit + ')');
    const u = units.filter(function (c) { return end >= c[0]; }).pop();
    const show = function (ns) { return +(ns / u[0]).toPrecision(4); };
    status.textContent =
        'showing ' + show(t0) + '\u2013' + show(t1) + ' of ' + show(end) + ' ' + u[1];
  }
  function view(a, b) {
    const span = Math.min(end, Math.max(Math.min(end, 100), b - a));
    a = Math.min(Math.max(0, a), end - span);
    t0 = a;
    t1 = a + span;
    if (!pending) { pending = true; requestAnimationFrame(draw); }
  }
  // The picture's own scale, where the writer made microbatch numbers fit, from time 0.
  function home() { view(0, end * Math.min(1, W / W0)); }
  function fit() {
    const width = Math.max(+d.minWidth, L + 200 + R, wrap.clientWidth);
    W = width - L - R;
    svg.setAttribute('width', width);
    svg.setAttribute('viewBox', '0 0 ' + width + ' ' + svg.getAttribute('height'));
  }
  function svgX(ev) { return ev.clientX - svg.getBoundingClientRect().left; }
  // Over the row names the wheel scrolls the page; over the plot it zooms around the cursor.
  svg.addEventListener('wheel', function (ev) {
    const px = svgX(ev);
    if (px < L) return;
    ev.preventDefault();
    const unit = ev.deltaMode === 1 ? 16 : ev.deltaMode === 2 ? 400 : 1;
    if (Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) {  // a sideways swipe pans
      const dt = ev.deltaX * unit / W * (t1 - t0);
      view(t0 + dt, t1 + dt);
      return;
    }
    const f = Math.exp(ev.deltaY * unit * 0.002);
    const tc = t0 + Math.min(Math.max(px - L, 0), W) / W * (t1 - t0);
    view(tc - (tc - t0) * f, tc + (t1 - tc) * f);
  }, {passive: false});
  let drag = null;
  svg.addEventListener('mousedown', function (ev) {
    if (svgX(ev) < L) return;
    drag = {x: ev.clientX, t0: t0, t1: t1};
    ev.preventDefault();
  });
  window.addEventListener('mouseup', function () { drag = null; });
  window.addEventListener('mousemove', function (ev) {
    if (drag) {
      const dt = (ev.clientX - drag.x) / W * (drag.t1 - drag.t0);
      view(drag.t0 - dt, drag.t1 - dt);
      tip.hidden = true;
      return;
    }
    const target = ev.target.closest ? ev.target.closest('[data-d]') : null;
    if (!target) { tip.hidden = true; return; }
    tip.textContent = target.dataset.d;
    tip.hidden = false;
    const left = ev.clientX + 14 + tip.offsetWidth > window.innerWidth
        ? ev.clientX - 14 - tip.offsetWidth : ev.clientX + 14;
    tip.style.left = Math.max(0, left) + 'px';
    tip.style.top = (ev.clientY + 14) + 'px';
  });
  document.getElementById('reset').addEventListener('click', home);
  const xfers = document.getElementById('xfers');
  if (xfers) {
    xfers.addEventListener('change', function () {
      svg.querySelectorAll('rect.xfer').forEach(function (r) {
        r.setAttribute('visibility', xfers.checked ? 'visible' : 'hidden');
      });
    });
  }
  const deps = document.getElementById('flows');
  if (deps) {
    deps.addEventListener('change', function () {
      svg.querySelector('g.flows').setAttribute('visibility', deps.checked ? 'visible' : 'hidden');
    });
  }
  document.getElementById('whole').addEventListener('click', function () { view(0, end); });
  window.addEventListener('resize', function () {
    fit();
    view(t0, t1);
  });
  // The page opens on the whole iteration; "reset" zooms to the picture's own scale.
  fit();
  view(0, end);
  draw();
})();
