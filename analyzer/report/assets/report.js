// SPDX-License-Identifier: Apache-2.0
// The cuclimb HTML report: renders the JSON data embedded in the page (cuclimb analyze --html,
// cuclimb diff --html) into tables and SVG charts. No network, no libraries.
//
// Safety rule: data strings come from traces (kernel names, NVTX ranges, call stacks, command
// lines) and reach the DOM only as text: el() and svgText() create text nodes, attributes are
// set with setAttribute, and nothing here assigns innerHTML or builds markup from strings.
'use strict';
(function () {
  const SVGNS = 'http://www.w3.org/2000/svg';
  const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf',
    '#7f7f7f', '#bcbd22', '#393b79', '#ad494a', '#637939', '#8c6d31', '#843c39', '#7b4173'];

  // ---- DOM helpers -----------------------------------------------------------------------------

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    if (attrs) for (const k of Object.keys(attrs)) {
      const v = attrs[k];
      if (v === null || v === undefined || v === false) continue;
      if (k === 'onclick' || k === 'onchange' || k === 'ontoggle') e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : String(v));
    }
    append(e, children);
    return e;
  }
  function append(parent, children) {
    for (const c of children) {
      if (c === null || c === undefined || c === false) continue;
      if (Array.isArray(c)) append(parent, c);
      else if (c instanceof Node) parent.appendChild(c);
      else parent.appendChild(document.createTextNode(String(c)));
    }
  }
  function svg(tag, attrs) {
    const e = document.createElementNS(SVGNS, tag);
    if (attrs) for (const k of Object.keys(attrs)) e.setAttribute(k, String(attrs[k]));
    return e;
  }
  function svgText(x, y, text, attrs) {
    const t = svg('text', Object.assign({x: x, y: y}, attrs || {}));
    t.appendChild(document.createTextNode(String(text)));
    return t;
  }

  // ---- Formatting ------------------------------------------------------------------------------

  function num(v, digits) {
    if (v === null || v === undefined || !isFinite(v)) return '–';
    const a = Math.abs(v);
    if (a !== 0 && (a >= 1e6 || a < 1e-3)) return v.toExponential(2);
    return Number(v.toPrecision(digits || 4)).toLocaleString('en-US', {maximumFractionDigits: 6});
  }
  function ms(v) {
    if (v === null || v === undefined || !isFinite(v)) return '–';
    const a = Math.abs(v);
    if (a >= 1000) return num(v / 1000, 3) + ' s';
    if (a >= 1) return num(v, 3) + ' ms';
    if (a >= 1e-3) return num(v * 1000, 3) + ' µs';
    if (a === 0) return '0';
    return num(v * 1e6, 3) + ' ns';
  }
  function bytes(v) {
    if (v === null || v === undefined || !isFinite(v)) return '–';
    const a = Math.abs(v);
    const units = [['GiB', 1 << 30], ['MiB', 1 << 20], ['KiB', 1 << 10]];
    for (const [u, s] of units) if (a >= s) return num(v / s, 3) + ' ' + u;
    return num(v, 4) + ' B';
  }
  function pct(v) { return (v === null || v === undefined) ? '–' : (v > 0 ? '+' : '') + num(v, 3) + '%'; }
  function pval(p) { return p === null || p === undefined ? '–' : (p < 1e-99 ? '<1e-99' : Number(p).toPrecision(2)); }
  function byUnit(unit) {
    if (unit === 'ms') return ms;
    if (unit === 'bytes' || unit === 'B') return bytes;
    if (unit === 'us') return (v) => ms(v / 1000);
    return (v) => num(v, 6);
  }
  function plural(n, word) { return n + ' ' + word + (n === 1 ? '' : 's'); }

  // ---- Series ----------------------------------------------------------------------------------

  // A series is an array (one value per iteration), {bin, v} (means of `bin` iterations), or null
  // (left out of the page to keep it small).
  function S(s) {
    if (s === null || s === undefined) return null;
    if (Array.isArray(s)) return {n: s.length, bin: 1, v: s, at: (i) => s[i]};
    const bin = s.bin, v = s.v;
    return {n: v.length * bin, bin: bin, v: v, at: (i) => v[Math.floor(i / bin)]};
  }

  // ---- Tooltip ---------------------------------------------------------------------------------

  const tip = document.getElementById('tooltip');
  function showTip(ev, title, rows) {
    tip.textContent = '';
    tip.appendChild(el('div', {class: 't-title'}, title));
    for (const r of rows) {
      const row = el('div', {class: 't-row'});
      if (r.color) {
        const sw = el('span', {class: 'swatch'});
        sw.style.background = r.color;
        row.appendChild(sw);
      }
      append(row, [r.text]);
      tip.appendChild(row);
    }
    tip.hidden = false;
    const pad = 14;
    let x = ev.pageX + pad, y = ev.pageY + pad;
    const w = tip.offsetWidth, h = tip.offsetHeight;
    if (x + w > window.scrollX + document.documentElement.clientWidth) x = ev.pageX - w - pad;
    if (y + h > window.scrollY + document.documentElement.clientHeight) y = ev.pageY - h - pad;
    tip.style.left = Math.max(0, x) + 'px';
    tip.style.top = Math.max(0, y) + 'px';
  }
  function hideTip() { tip.hidden = true; }

  // ---- Charts ----------------------------------------------------------------------------------

  function niceTicks(lo, hi, count) {
    if (!(hi > lo)) return [lo];
    const raw = (hi - lo) / count, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) || 10 * mag;
    const out = [];
    for (let t = Math.ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step) out.push(t);
    return out;
  }
  // Byte axes: steps of a power of two bytes (… 128 KiB, 256 KiB, 512 KiB, 1 MiB, 2 MiB …), so
  // that ticks read 12.25, 12.5, 12.75 MiB rather than 12.2, 12.4 in a binary unit.
  function byteTicks(lo, hi, count) {
    if (!(hi > lo)) return [lo];
    const step = Math.pow(2, Math.ceil(Math.log2((hi - lo) / count)));
    const out = [];
    for (let t = Math.ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step) out.push(t);
    return out;
  }
  function byteTick(v, step) {
    const a = Math.max(Math.abs(v), step);
    const units = [['GiB', 1024 * 1024 * 1024], ['MiB', 1024 * 1024], ['KiB', 1024], ['B', 1]];
    const [u, s] = units.find(([, s]) => a >= s) || ['B', 1];
    const decimals = step >= s ? 0 : Math.min(4, Math.ceil(-Math.log2(step / s)));
    return Number((v / s).toFixed(decimals)).toString() + ' ' + u;
  }

  // Points to draw for a series over `px` pixel columns: every point when short, else the first,
  // minimum, maximum and last of each column (the line looks the same, hover stays exact). A
  // null (no record in that iteration: a gap, not a zero) is kept as [j, null] and breaks the line.
  function drawPoints(s, x0, x1, px) {
    const n = s.v.length, out = [];
    if (n <= px * 2) {
      for (let j = 0; j < n; ++j) out.push([j, s.v[j] === undefined ? null : s.v[j]]);
      return out;
    }
    const per = (x1 - x0 + 1) / px;
    for (let c = 0; c < px; ++c) {
      const a = Math.floor(x0 + c * per), b = Math.min(n, Math.floor(x0 + (c + 1) * per));
      if (b <= a) continue;
      let mn = -1, mx = -1, first = -1, last = -1;
      for (let j = a; j < b; ++j) {
        const v = s.v[j];
        if (v === null || v === undefined) continue;
        if (first < 0) first = j;
        last = j;
        if (mn < 0 || v < s.v[mn]) mn = j;
        if (mx < 0 || v > s.v[mx]) mx = j;
      }
      if (first < 0) { out.push([a, null]); continue; }
      const pts = [first, mn, mx, last].sort((p, q) => p - q);
      for (let k = 0; k < pts.length; ++k) if (k === 0 || pts[k] !== pts[k - 1]) out.push([pts[k], s.v[pts[k]]]);
    }
    return out;
  }
  // An SVG path through points, starting a new piece after every gap.
  function pathOf(pts, X, Y) {
    let d = '', pen = false;
    for (const [x, v] of pts) {
      if (v === null) { pen = false; continue; }
      d += (pen ? 'L' : 'M') + X(x).toFixed(1) + ' ' + Y(v).toFixed(1);
      pen = true;
    }
    return d;
  }
  function valuesOf(series) {
    let any = false, nonzero = false, lo = Infinity, hi = -Infinity;
    for (const x of series) for (const v of x.s.v) {
      if (v === null || v === undefined) continue;
      any = true;
      if (v !== 0) nonzero = true;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    return {any: any, nonzero: nonzero, lo: lo, hi: hi};
  }

  // A line (or stacked area) chart over iterations with a legend that toggles series and a hover
  // read-out of every visible series at the iteration under the pointer.
  // opts: {series: [{name, s: S(...), color, unit}], fmt, bytes (byte axis), stacked, height,
  //        markers: [{at, text}], title, empty (sentence when no data), zero (sentence when all 0)}
  // A chart whose every value is zero becomes that sentence; iterations without a value (null)
  // are gaps in the line, never zeros. The y range starts at zero only when the data come close
  // to it, so a 12.3 → 12.7 MiB growth fills the chart instead of hiding in its top line.
  function lineChart(opts) {
    const W = opts.width || 1100, H = opts.height || 260;
    const L = 72, R = 12, T = 10, B = 36;
    const pw = W - L - R, ph = H - T - B;
    const series = opts.series.filter((x) => x.s && x.s.n > 0);
    const box = el('div', {class: 'chart-box'});
    const seen = valuesOf(series);
    if (!series.length || !seen.any) {
      box.appendChild(el('p', {class: 'muted chart-empty'}, opts.empty || 'No per-iteration data for this chart.'));
      return box;
    }
    if (!seen.nonzero) {
      box.appendChild(el('p', {class: 'muted chart-zero'}, opts.zero || ((opts.label || 'This value') + ' is zero in every iteration.')));
      return box;
    }
    series.forEach((x, k) => { x.color = x.color || COLORS[k % COLORS.length]; if (x.on === undefined) x.on = true; });
    const fmt = opts.fmt || ((v) => num(v));
    const n = Math.max(...series.map((x) => x.s.n));
    const root = svg('svg', {class: 'chart', viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, role: 'img'});
    if (opts.label) root.setAttribute('aria-label', opts.label);
    const plot = svg('g', {});
    root.appendChild(plot);
    const legend = el('div', {class: 'legend'});

    function draw() {
      while (plot.firstChild) plot.removeChild(plot.firstChild);
      const vis = series.filter((x) => x.on);
      const stacks = [];
      let lo, hi;
      if (opts.stacked) {
        lo = 0; hi = 0;
        const len = Math.max(0, ...vis.map((x) => x.s.v.length));
        const acc = new Array(len).fill(0);
        for (const x of vis) {
          if (x.line) {
            for (const v of x.s.v) if (v !== null && v > hi) hi = v;
            continue;
          }
          const top = x.s.v.map((v, j) => (acc[j] += (v || 0)));
          stacks.push({x: x, top: top.slice()});
        }
        for (let k = 0; k < stacks.length; ++k) stacks[k].base = k > 0 ? stacks[k - 1].top : new Array(stacks[k].top.length).fill(0);
        hi = Math.max(hi, ...acc);
      } else {
        const r = valuesOf(vis.length ? vis : series);
        lo = r.lo; hi = r.hi;
        // From zero when the data start near it; otherwise the data's own range, padded.
        if (lo >= 0 && lo <= 0.25 * hi) lo = 0;
        const pad = (hi - lo) * 0.08 || Math.abs(hi) * 0.05 || 1;
        if (lo !== 0) lo -= pad;
        hi += pad;
      }
      if (opts.extraMax && opts.extraMax > hi) hi = opts.extraMax;
      if (!(hi > lo)) hi = lo + 1;
      const X = (i) => L + (n <= 1 ? pw / 2 : (i / (n - 1)) * pw);
      const Y = (v) => T + ph - ((v - lo) / (hi - lo)) * ph;
      const grid = svg('g', {class: 'grid'}), axis = svg('g', {class: 'axis'});
      const ticks = opts.bytes ? byteTicks(lo, hi, 4) : niceTicks(lo, hi, 4);
      const step = ticks.length > 1 ? ticks[1] - ticks[0] : 1;
      for (const t of ticks) {
        if (t < lo - 1e-9 || t > hi + 1e-9) continue;
        grid.appendChild(svg('line', {x1: L, x2: L + pw, y1: Y(t), y2: Y(t)}));
        axis.appendChild(svgText(L - 6, Y(t) + 4, opts.bytes ? byteTick(t, step) : fmt(t), {'text-anchor': 'end'}));
      }
      for (const t of niceTicks(0, Math.max(1, n - 1), 8)) {
        if (t > n - 1 || t !== Math.round(t)) continue;
        axis.appendChild(svgText(X(t), T + ph + 16, t, {'text-anchor': 'middle'}));
      }
      axis.appendChild(svgText(L + pw / 2, H - 3, opts.xName || 'iteration', {'text-anchor': 'middle', class: 'axis-label'}));
      axis.appendChild(svg('path', {d: 'M' + L + ' ' + T + 'V' + (T + ph) + 'H' + (L + pw), fill: 'none'}));
      plot.appendChild(grid);
      plot.appendChild(axis);
      const px = Math.max(50, Math.floor(pw));
      const Xb = (bin) => (j) => X(j * bin + (bin - 1) / 2);
      if (opts.stacked) {
        for (const st of stacks) {
          const bin = st.x.s.bin, m = st.top.length, Xs = Xb(bin);
          const top = drawPoints({v: st.top}, 0, m - 1, px), base = drawPoints({v: st.base}, 0, m - 1, px);
          let d = '';
          top.forEach(([j, v], k) => { d += (k ? 'L' : 'M') + Xs(j).toFixed(1) + ' ' + Y(v).toFixed(1); });
          for (let k = base.length - 1; k >= 0; --k) d += 'L' + Xs(base[k][0]).toFixed(1) + ' ' + Y(base[k][1]).toFixed(1);
          plot.appendChild(svg('path', {d: d + 'Z', fill: st.x.color, 'fill-opacity': 0.55, stroke: st.x.color, 'stroke-width': 0.5}));
        }
      }
      for (const x of vis) {
        if (opts.stacked && !x.line) continue;
        const pts = drawPoints(x.s, 0, x.s.v.length - 1, px);
        const Xs = Xb(x.s.bin);
        let d = pathOf(pts, Xs, Y);
        // A lone point between gaps is drawn as a short tick so that it stays visible.
        d = d.replace(/M([\d.]+) ([\d.]+)(?=M|$)/g, 'M$1 $2h1');
        plot.appendChild(svg('path', {d: d, fill: 'none', stroke: x.color, 'stroke-width': x.width || 1.5, 'stroke-dasharray': x.dash || 'none'}));
      }
      for (const m of opts.markers || []) {
        if (m.at === null || m.at === undefined || m.at < 0 || m.at >= n) continue;
        plot.appendChild(svg('line', {class: 'marker-line', x1: X(m.at), x2: X(m.at), y1: T, y2: T + ph}));
        plot.appendChild(svgText(X(m.at) + 4, T + 12, m.text, {class: 'marker-text'}));
      }
      const hover = svg('line', {class: 'hover-line', x1: 0, x2: 0, y1: T, y2: T + ph, visibility: 'hidden'});
      plot.appendChild(hover);
      const overlay = svg('rect', {class: 'overlay', x: L, y: T, width: pw, height: ph, fill: 'transparent'});
      overlay.addEventListener('mousemove', (ev) => {
        const r = root.getBoundingClientRect();
        const sx = (ev.clientX - r.left) * (W / r.width);
        const i = Math.max(0, Math.min(n - 1, Math.round(((sx - L) / pw) * (n - 1))));
        hover.setAttribute('x1', X(i));
        hover.setAttribute('x2', X(i));
        hover.setAttribute('visibility', 'visible');
        const rows = [];
        let binned = null;
        for (const x of vis) {
          if (i >= x.s.n) continue;
          const v = x.s.at(i);
          if (x.s.bin > 1) binned = x.s.bin;
          rows.push({color: x.color, text: x.name + ': ' + (v === null || v === undefined ? 'no record in this iteration' : fmt(v))});
        }
        let title = (opts.xName || 'iteration') + ' ' + i;
        if (binned) {
          const a = Math.floor(i / binned) * binned;
          title += ' (mean of iterations ' + a + '–' + Math.min(n - 1, a + binned - 1) + ')';
        }
        if (opts.stacked) {
          const total = vis.filter((x) => !x.line && i < x.s.n).reduce((t, x) => t + (x.s.at(i) || 0), 0);
          rows.push({text: 'stacked total: ' + fmt(total)});
        }
        showTip(ev, title, rows);
      });
      overlay.addEventListener('mouseleave', () => { hover.setAttribute('visibility', 'hidden'); hideTip(); });
      plot.appendChild(overlay);
    }

    if (series.length > 1 || opts.alwaysLegend) {
      series.forEach((x) => {
        const sw = el('span', {class: 'swatch'});
        sw.style.background = x.color;
        const item = el('span', {class: 'legend-item' + (x.on ? '' : ' off'), title: 'show or hide'}, sw, x.name);
        item.addEventListener('click', () => {
          x.on = !x.on;
          item.classList.toggle('off', !x.on);
          draw();
        });
        legend.appendChild(item);
      });
      box.appendChild(legend);
    }
    draw();
    box.appendChild(root);
    return box;
  }

  // A bar chart over iterations (counts per iteration), hover exact.
  function barChart(opts) {
    return lineChart(Object.assign({}, opts, {stacked: true}));
  }

  // A small line for table cells; hover shows the value at the iteration under the pointer. Gaps
  // (null) break the line; its range is the data's own, from zero when they come close to it.
  function sparkline(raw, fmt, color) {
    const s = S(raw);
    if (!s || !s.v.length) return el('span', {class: 'muted'}, '–');
    const W = 120, H = 24;
    let lo = Infinity, hi = -Infinity;
    for (const v of s.v) if (v !== null && v !== undefined) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    if (lo === Infinity) return el('span', {class: 'muted'}, 'no records');
    if (lo >= 0 && lo <= 0.25 * hi) lo = 0;
    if (!(hi > lo)) { hi = lo + 1; lo -= 1; }
    const root = svg('svg', {class: 'spark', width: W, height: H, viewBox: '0 0 ' + W + ' ' + H});
    const m = s.v.length;
    const X = (j) => (m <= 1 ? W / 2 : 1 + (j / (m - 1)) * (W - 2));
    const Y = (v) => H - 2 - ((v - lo) / (hi - lo)) * (H - 4);
    root.appendChild(svg('path', {d: pathOf(drawPoints(s, 0, m - 1, 60), X, Y), fill: 'none', stroke: color || COLORS[0], 'stroke-width': 1.2}));
    const ov = svg('rect', {x: 0, y: 0, width: W, height: H, fill: 'transparent'});
    ov.addEventListener('mousemove', (ev) => {
      const r = root.getBoundingClientRect();
      const i = Math.max(0, Math.min(s.n - 1, Math.round(((ev.clientX - r.left) / r.width) * (s.n - 1))));
      const v = s.at(i);
      showTip(ev, 'iteration ' + i + (s.bin > 1 ? ' (bin of ' + s.bin + ')' : ''), [{text: v === null || v === undefined ? 'no record' : (fmt || num)(v)}]);
    });
    ov.addEventListener('mouseleave', hideTip);
    root.appendChild(ov);
    return root;
  }

  // ---- Tables ----------------------------------------------------------------------------------

  // cols: [{label, get(row) → sortable value, show(row) → node/text, num, title}]
  function table(cols, rows, opts) {
    opts = opts || {};
    const t = el('table', {class: 'sortable-table'});
    const thead = el('thead'), tr = el('tr'), tbody = el('tbody');
    let sortCol = opts.sortCol === undefined ? -1 : opts.sortCol, dir = opts.dir || 1;
    const ths = cols.map((c, k) => {
      const th = el('th', {class: (c.num ? 'num ' : '') + (c.get ? 'sortable' : ''), title: c.title || null}, c.label);
      if (c.get) th.addEventListener('click', () => {
        dir = sortCol === k ? -dir : (c.num ? -1 : 1);
        sortCol = k;
        fill();
      });
      tr.appendChild(th);
      return th;
    });
    thead.appendChild(tr);
    t.appendChild(thead);
    t.appendChild(tbody);
    const order = rows.map((r, k) => k);
    function fill() {
      ths.forEach((th, k) => th.setAttribute('aria-sort', k === sortCol ? (dir > 0 ? 'ascending' : 'descending') : 'none'));
      if (sortCol >= 0) {
        const g = cols[sortCol].get;
        order.sort((a, b) => {
          const x = g(rows[a]), y = g(rows[b]);
          if (x === y || (x === null && y === null)) return a - b;
          if (x === null || x === undefined) return 1;
          if (y === null || y === undefined) return -1;
          return (x < y ? -1 : 1) * dir;
        });
      }
      tbody.textContent = '';
      for (const k of order) {
        const r = rows[k];
        const row = el('tr', {class: opts.rowClass ? opts.rowClass(r) : null});
        if (opts.onRow) {
          row.classList.add('clickable');
          row.addEventListener('click', () => {
            for (const o of tbody.querySelectorAll('tr.selected')) o.classList.remove('selected');
            row.classList.add('selected');
            opts.onRow(r);
          });
        }
        for (const c of cols) {
          const v = c.show ? c.show(r) : c.get(r);
          row.appendChild(el('td', {class: c.num ? 'num' : (c.name ? 'name' : null)}, v));
        }
        tbody.appendChild(row);
      }
    }
    fill();
    return el('div', {class: 'table-wrap'}, t);
  }

  function section(id, title, ...children) {
    return el('section', {id: id}, el('h2', null, title), children);
  }
  function stat(label, value, cls) {
    return el('span', {class: 'stat'}, el('b', {class: cls || null}, value), label);
  }

  // ---- The analyze page ------------------------------------------------------------------------
  // It reads the JSON report (docs/report-schema.md) by its documented keys. The page embeds a
  // budgeted subset of it (docs/reports.md): series may be binned ({bin, v}) or left out (null),
  // long tables cut; `page` says what was left out. null inside a series is an iteration without
  // a record (a gap), never a zero.

  function framesOrHowTo(site, command) {
    if (site && site.frames && site.frames.length) return el('ol', {class: 'frames'}, site.frames.map((f) => el('li', null, f)));
    return el('p', {class: 'howto'}, 'No call stack was recorded, so the call site is unknown. Record the program again with call stacks: ',
      el('code', null, command || 'cuclimb record --stacks fp -- PROGRAM'),
      ' (frame-pointer walk; --stacks unwind for code built without frame pointers).');
  }
  function recordCommand(D) {
    const next = (D.headline && D.headline.next) || [];
    const step = next.find((n) => n.command.indexOf('--stacks') >= 0);
    return step ? step.command : null;
  }
  function traceDuration(r) { return (r.trace.last_ts_ns || 0) - (r.trace.first_ts_ns || 0); }
  function accSeries(a) { return a.evidence || {}; }

  function headlineBlock(D) {
    const h = D.headline;
    if (!h) return null;
    const box = el('div', {class: 'headline ' + (D.verdict === 'climbing' ? 'bad' : 'good'), id: 'headline'});
    box.appendChild(el('p', {class: 'what', id: 'what'}, h.what));
    if (h.cause) box.appendChild(el('p', {class: 'cause', id: 'cause'}, el('b', null, 'Cause: '), h.cause));
    if (h.where) box.appendChild(el('p', {class: 'where', id: 'where'}, el('b', null, 'Where: '), h.where));
    if (h.next && h.next.length) {
      box.appendChild(el('p', {class: 'next-title'}, el('b', null, 'Next:')));
      box.appendChild(el('ul', {class: 'next', id: 'next'}, h.next.map((n) => el('li', null, n.why + ': ', el('code', null, n.command)))));
    }
    return box;
  }

  function header(D) {
    const climbing = D.verdict === 'climbing';
    const out = [el('h1', null, 'cuclimb report ', el('span', {class: 'badge ' + (climbing ? 'bad' : 'good'), id: 'verdict'}, D.verdict))];
    out.push(headlineBlock(D));
    if (D.partial) out.push(el('div', {class: 'banner warn'}, 'A trace was cut or damaged: the report covers what was readable.'));
    const dropped = D.ranks.reduce((t, r) => t + (r.overhead.dropped || 0), 0);
    if (dropped > 0) out.push(el('div', {class: 'banner warn', id: 'drops-banner'}, 'The recorder dropped ' + num(dropped) + ' events: see "Profiler overhead and drops".'));
    return out;
  }

  function runSummary(D) {
    const r0 = D.ranks[0] || {process: {devices: []}, trace: {}, iterations: {}};
    const p = r0.process, gpus = (p.devices || []).map((d) => d.name + (d.total_bytes ? ' (' + bytes(d.total_bytes) + ')' : ''));
    const dur = D.ranks.reduce((m, r) => Math.max(m, traceDuration(r)), 0);
    const it = D.iterations;
    const out = [el('dl', {class: 'summary'},
      el('dt', null, 'program'), el('dd', {class: 'mono', id: 'program'}, p.cmd || p.exe || '(unknown)'),
      el('dt', null, 'GPU'), el('dd', {id: 'gpu'}, gpus.length ? gpus.join(', ') : '(not recorded)'),
      el('dt', null, 'host'), el('dd', null, (p.host || '–') + (p.pid ? ', pid ' + p.pid : '') + (D.ranks.length > 1 ? ' (rank 0 of ' + D.ranks.length + ')' : '')),
      el('dt', null, 'duration'), el('dd', {id: 'duration'}, ms(dur / 1e6)),
      el('dt', null, 'iterations'), el('dd', null, it.count + ' from ' + it.source + (it.name ? ' "' + it.name + '"' : '') + (it.why ? ' — ' + it.why : '')),
      el('dt', null, 'trace'), el('dd', {class: 'mono'}, D.ranks.map((r) => r.trace.path + ' (' + r.trace.status + ', ' + num(r.trace.events) + ' events)').join('; ')))];
    if (D.notes && D.notes.length) out.push(el('ul', {class: 'notes'}, D.notes.map((n) => el('li', null, n))));
    out.push(el('nav', {class: 'toc'}, [['accumulators', 'Accumulators'], ['ranges', 'Step time'], ['decomposition', 'Where time goes'],
      ['state', 'Live handles and bytes'], ['lifetimes', 'Lifetimes'], ['kernels', 'Kernels'], ['overhead', 'Overhead and drops']]
      .map(([id, t]) => el('a', {href: '#' + id}, t))));
    return out;
  }

  function verdictBadge(r) {
    if (r.climbing && r.sets_verdict !== false) return el('span', {class: 'badge bad'}, 'climbing');
    if (r.climbing) return el('span', {class: 'badge warn', title: 'climbs, but does not set the verdict (not material, not steady, or the machine)'}, 'climbs slightly');
    return el('span', {class: 'muted'}, 'flat');
  }

  function rangesSection(R, state) {
    const ranges = R.ranges;
    const series = ranges.map((r, k) => ({name: r.name, s: S(r.total_ms), on: k < 8 || r.climbing}));
    const chart = lineChart({series: series, fmt: ms, label: 'step time per iteration', alwaysLegend: true});
    const cols = [
      {label: 'range', get: (r) => r.name, name: true},
      {label: 'first', get: (r) => r.trend.first, show: (r) => ms(r.trend.first), num: true},
      {label: 'last', get: (r) => r.trend.last, show: (r) => ms(r.trend.last), num: true},
      {label: 'climb', get: (r) => (r.trend.tested ? r.trend.change_pct : null), show: (r) => (r.trend.tested ? pct(r.trend.change_pct) : '–'), num: true},
      {label: 'slope / iter', get: (r) => r.trend.slope_per_iter, show: (r) => ms(r.trend.slope_per_iter), num: true},
      {label: 'p', get: (r) => r.trend.p_value, show: (r) => pval(r.trend.p_value), num: true},
      {label: 'trend', show: (r) => sparkline(r.total_ms, ms, r.climbing ? '#d62728' : null)},
      {label: 'verdict', get: (r) => (r.climbing ? 1 : 0), show: verdictBadge},
      {label: 'cause', get: (r) => (r.cause && r.cause.summary) || r.explained_by.join(', '), name: true},
    ];
    const tbl = table(cols, ranges, {rowClass: (r) => (r.climbing ? 'climbing' : null), onRow: (r) => state.selectRange(r.name)});
    return section('ranges', 'Step time per iteration', el('p', {class: 'muted'}, 'Total time of each NVTX range per iteration. Click a row to decompose it below; click a legend entry to show or hide a line.'), chart, tbl);
  }

  function decompositionSection(R, state) {
    const box = el('div');
    const sel = el('select', {id: 'range-select', 'aria-label': 'range'});
    R.ranges.forEach((r) => sel.appendChild(el('option', {value: r.name}, r.name + (r.climbing ? ' (climbing)' : ''))));
    function show(name) {
      sel.value = name;
      box.textContent = '';
      const r = R.ranges.find((x) => x.name === name);
      if (!r) return;
      if (r.where_time_goes) box.appendChild(el('p', null, r.where_time_goes));
      const d = r.decomposition;
      if (!d) {
        box.appendChild(el('p', {class: 'muted'}, 'The decomposition of this range was left out of the page; the JSON report has it.'));
        return;
      }
      box.appendChild(lineChart({
        series: [{name: 'CUDA calls', s: S(d.api.ms)}, {name: 'sync waits', s: S(d.sync.ms)}, {name: 'host code between calls', s: S(d.host.ms)},
          {name: 'GPU time of its kernels (concurrent; gaps: iterations without GPU records)', s: S(d.gpu.ms), line: true, dash: '4 3', color: '#555'}],
        stacked: true, fmt: ms, label: 'decomposition of ' + r.name, alwaysLegend: true}));
      const parts = [];
      for (const [kind, list] of [['api', d.by_api], ['sync', d.by_sync], ['kernel', d.by_kernel]]) for (const c of list) parts.push(Object.assign({kind: kind}, c));
      for (const c of [d.api, d.sync, d.host, d.gpu]) parts.push(Object.assign({kind: 'component'}, c));
      box.appendChild(el('h3', null, 'Parts of "' + r.name + '" and how much each grew'));
      box.appendChild(table([
        {label: 'part', get: (c) => c.kind, name: true},
        {label: 'name', get: (c) => c.name, name: true},
        {label: 'growth over the run', get: (c) => c.delta_ms, show: (c) => ms(c.delta_ms), num: true},
        {label: 'first', get: (c) => c.trend.first, show: (c) => ms(c.trend.first), num: true},
        {label: 'last', get: (c) => c.trend.last, show: (c) => ms(c.trend.last), num: true},
        {label: 'trend', show: (c) => sparkline(c.ms, ms)},
      ], parts, {sortCol: 2, dir: -1}));
    }
    sel.addEventListener('change', () => show(sel.value));
    state.selectRange = (name) => { show(name); };
    if (R.ranges.length) show(R.ranges[0].name);
    return section('decomposition', 'Where the time goes', el('p', {class: 'muted'}, 'Per iteration, the range\'s time split into CUDA API calls, synchronization waits and host time between calls (stacked; their sum is the range\'s time); GPU time of its kernels runs concurrently and is drawn as a line, with gaps where no GPU records were taken (kernel timing is sampled).'),
      el('div', {class: 'controls'}, el('label', null, 'range ', sel)), box);
  }

  function exampleCols(count) {
    return [
      {label: 'address', get: (e) => e.address, show: (e) => el('code', null, e.address)},
      {label: 'serial', get: (e) => e.serial, num: true},
      {label: 'size', get: (e) => e.size_bytes, show: (e) => (e.size_bytes ? bytes(e.size_bytes) : '–'), num: true},
      {label: 'API', get: (e) => e.api},
      {label: 'allocated in', get: (e) => e.alloc_iteration, show: (e) => (e.alloc_iteration < 0 ? 'prologue' : 'iteration ' + e.alloc_iteration), num: true},
      {label: 'freed', get: (e) => (e.free_iteration === null ? Infinity : e.free_iteration),
        show: (e) => (e.free_iteration === null ? 'never' : e.free_iteration >= count ? 'at tear-down, after the loop' : 'iteration ' + e.free_iteration), num: true},
    ];
  }

  function accumulatorDetails(a, R, D, open) {
    const ev = accSeries(a);
    const fmtV = byUnit(a.unit);
    const d = el('details', {class: 'evidence', id: 'acc-' + a.rank});
    d.appendChild(el('summary', null, '#' + a.rank + ' ' + a.kind + ': ' + a.key));
    let built = false;
    function build() {
      if (built) return;
      built = true;
      if (ev.summary) d.appendChild(el('p', null, ev.summary));
      d.appendChild(el('div', {class: 'kv'}, 'growth ' + fmtV(a.growth_per_iter) + ' ' + a.unit + ' per iteration from iteration ' + ev.growth_start_iteration +
        (ev.bytes_per_iter ? ', ' + bytes(ev.bytes_per_iter) + ' per iteration' : '') + ', p = ' + pval(a.p_value) +
        ((ev.apis || []).length ? '; APIs ' + ev.apis.join(', ') : '') + ((ev.size_classes || []).length ? '; sizes ' + ev.size_classes.join(', ') : '')));
      d.appendChild(el('h3', null, 'Call site'));
      d.appendChild(framesOrHowTo(ev.call_site, recordCommand(D)));
      d.appendChild(el('div', {class: 'grid2'},
        lineChart({series: [{name: a.unit + ' live', s: S(ev.series)}], fmt: fmtV, bytes: a.unit === 'bytes', width: 560, height: 180, alwaysLegend: true, label: a.id}),
        lineChart({series: [{name: 'live bytes', s: S(ev.bytes_series), color: COLORS[3]}], fmt: bytes, bytes: true, width: 560, height: 180, alwaysLegend: true,
          label: 'live bytes of ' + a.id, empty: 'This kind of state has no byte size.'})));
      if ((ev.explanations || []).length) {
        d.appendChild(el('h3', null, 'Does it explain the climb?'));
        d.appendChild(table([
          {label: 'range', get: (e) => e.range, name: true},
          {label: 'verdict', get: (e) => e.verdict},
          {label: 'share', get: (e) => e.share, show: (e) => num(e.share * 100, 3) + '%', num: true},
          {label: 'r', get: (e) => e.r, show: (e) => num(e.r, 3), num: true},
          {label: 'why', get: (e) => e.reason, name: true},
        ], ev.explanations));
      }
      if ((ev.examples || []).length) {
        d.appendChild(el('h3', null, 'Example survivors of the loop'));
        d.appendChild(table(exampleCols(R.iterations.count), ev.examples));
      }
    }
    d.addEventListener('toggle', () => { if (d.open) build(); });
    if (open) { d.open = true; build(); }
    return d;
  }

  function accumulatorsSection(R, D) {
    const A = R.accumulators;
    if (!A.length) return section('accumulators', 'Accumulators', el('p', {id: 'no-accumulators'}, 'None: no state grows steadily per iteration.'));
    const cols = [
      {label: '#', get: (a) => a.rank, num: true},
      {label: 'kind', get: (a) => a.kind},
      {label: 'key (call site)', get: (a) => a.key, name: true},
      {label: 'growth / iter', get: (a) => a.growth_per_iter, show: (a) => (a.unit === 'bytes' ? bytes(a.growth_per_iter) : num(a.growth_per_iter, 3) + ' ' + a.unit), num: true},
      {label: 'bytes / iter', get: (a) => accSeries(a).bytes_per_iter, show: (a) => (accSeries(a).bytes_per_iter ? bytes(accSeries(a).bytes_per_iter) : '–'), num: true},
      {label: 'since', get: (a) => accSeries(a).growth_start_iteration, num: true, title: 'iteration where steady growth starts'},
      {label: 'live over iterations', show: (a) => sparkline(accSeries(a).series, byUnit(a.unit), '#d62728')},
      {label: 'explains', get: (a) => a.explains.join(', '), name: true},
    ];
    // The evidence of the first accumulator is open: it is what the verdict rests on.
    const details = el('div', null, A.map((a, k) => accumulatorDetails(a, R, D, k === 0)));
    const tbl = table(cols, A, {onRow: (a) => {
      const d = document.getElementById('acc-' + a.rank);
      if (d) { d.open = true; d.scrollIntoView({block: 'nearest'}); }
    }});
    return section('accumulators', 'Accumulators: state that grows every iteration', el('p', {class: 'muted'}, 'Most relevant first. Click a row (or a heading below) for the evidence: call site, example survivors, and how much of each climbing range it explains.'), tbl, details);
  }

  function stateSection(R) {
    const st = R.state;
    const metrics = [...new Set(st.map((s) => s.metric))];
    const box = el('div');
    const mSel = el('select', {id: 'state-metric', 'aria-label': 'metric'}), dSel = el('select', {id: 'state-dimension', 'aria-label': 'dimension'});
    metrics.forEach((m) => mSel.appendChild(el('option', {value: m}, m)));
    if (metrics.includes('live_bytes')) mSel.value = 'live_bytes';
    function dims() {
      dSel.textContent = '';
      const ds = [...new Set(st.filter((s) => s.metric === mSel.value).map((s) => s.dimension))];
      ds.forEach((d) => dSel.appendChild(el('option', {value: d}, d)));
      if (ds.includes('memory_kind')) dSel.value = 'memory_kind';
    }
    function show() {
      box.textContent = '';
      const list = st.filter((s) => s.metric === mSel.value && s.dimension === dSel.value);
      const unit = list.length ? list[0].unit : '';
      const fmt = byUnit(unit);
      box.appendChild(lineChart({series: list.map((s) => ({name: s.key, s: S(s.values)})), fmt: fmt, bytes: unit === 'bytes', label: mSel.value + ' by ' + dSel.value, alwaysLegend: true}));
      box.appendChild(table([
        {label: dSel.value, get: (s) => s.key, name: true},
        {label: 'first', get: (s) => s.trend.first, show: (s) => fmt(s.trend.first), num: true},
        {label: 'last', get: (s) => s.trend.last, show: (s) => fmt(s.trend.last), num: true},
        {label: 'slope / iter', get: (s) => s.trend.slope_per_iter, show: (s) => fmt(s.trend.slope_per_iter), num: true},
        {label: 'p', get: (s) => s.trend.p_value, show: (s) => pval(s.trend.p_value), num: true},
        {label: 'over iterations', show: (s) => sparkline(s.values, fmt)},
      ], list));
    }
    mSel.addEventListener('change', () => { dims(); show(); });
    dSel.addEventListener('change', show);
    dims();
    show();
    return section('state', 'Live handles and bytes over iterations', el('p', {class: 'muted'}, 'Level at the end of each iteration, by memory kind, call site, handle type or heap (allocation calls and temporaries are per-iteration counts).'),
      el('div', {class: 'controls'}, el('label', null, 'metric ', mSel), el('label', null, 'by ', dSel)), box);
  }

  function lifetimesSection(R, D) {
    const T = R.temporaries, out = [];
    const hist = T.lifetime_histogram || {};
    const order = ['same', '1', '2-3', '4-7', '8-15', '16-31', '32-63', '64-127', '128-255', '256-511', '512-1023'];
    const rankOf = (k) => {
      const i = order.indexOf(k);
      if (i >= 0) return i;
      return k === 'never' ? 1e9 : k === 'from_prologue' ? 1e8 : 1e7 + (parseInt(k, 10) || 0);
    };
    const keys = Object.keys(hist).sort((a, b) => rankOf(a) - rankOf(b));
    const total = keys.reduce((t, k) => t + hist[k], 0) || 1;
    out.push(el('p', null, num(T.total) + ' allocations were freed in the iteration that made them (' + bytes(T.total_bytes) + ').'));
    if (keys.length) {
      out.push(el('h3', null, 'Allocations by iterations lived (allocated → freed)'));
      const W = 1100, rowH = 18, H = keys.length * rowH + 10;
      const chart = svg('svg', {class: 'chart', viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, role: 'img', 'aria-label': 'lifetime histogram'});
      const maxV = Math.max(1, ...keys.map((k) => hist[k]));
      keys.forEach((k, j) => {
        const v = hist[k], w = (v / maxV) * (W - 260);
        const y = 5 + j * rowH;
        chart.appendChild(svgText(110, y + 12, k === 'same' ? 'same iteration' : k === 'never' ? 'never freed' : k === 'from_prologue' ? 'from prologue' : k + ' iterations', {'text-anchor': 'end', 'font-size': 11}));
        const bar = svg('rect', {x: 120, y: y + 2, width: Math.max(1, w), height: rowH - 5, fill: k === 'never' ? '#d62728' : COLORS[0]});
        bar.addEventListener('mousemove', (ev) => showTip(ev, k, [{text: num(v) + ' allocations (' + num((100 * v) / total, 3) + '%)'}]));
        bar.addEventListener('mouseleave', hideTip);
        chart.appendChild(bar);
        chart.appendChild(svgText(126 + w, y + 12, num(v), {'font-size': 11}));
      });
      out.push(chart);
    }
    out.push(lineChart({series: [{name: 'temporaries per iteration', s: S(T.count)}], fmt: num, height: 160, alwaysLegend: true,
      label: 'temporaries', zero: 'No allocation was freed in the iteration that made it.'}));
    // Per accumulator: the survivors of the loop by the iteration that allocated them (never
    // freed, or freed only at tear-down), and example survivors as bars.
    const accs = R.accumulators.slice(0, 6);
    if (accs.length) {
      out.push(el('h3', null, 'Survivors of the loop by the iteration that allocated them'));
      out.push(barChart({series: accs.map((a) => ({name: '#' + a.rank + ' ' + a.key, s: S(accSeries(a).survivors_by_alloc_iteration)})), fmt: num, height: 200, alwaysLegend: true,
        label: 'survivors by allocation iteration', zero: 'No handle of these accumulators outlived the loop.'}));
      const ex = [];
      for (const a of accs) for (const e of accSeries(a).examples || []) ex.push({a: a, e: e});
      if (ex.length) out.push(el('h3', null, 'Example survivors: allocated → freed'), ganttChart(ex, R.iterations.count));
    }
    if (R.leaks.by_site.length) {
      out.push(el('h3', null, 'Live at the end of the trace (' + num(R.leaks.handles) + ' handles, ' + bytes(R.leaks.bytes) + ')'));
      out.push(table([
        {label: 'kind', get: (l) => l.kind},
        {label: 'call site', get: (l) => l.key, name: true},
        {label: 'handles', get: (l) => l.handles, show: (l) => num(l.handles), num: true},
        {label: 'bytes', get: (l) => l.bytes, show: (l) => bytes(l.bytes), num: true},
      ], R.leaks.by_site));
    }
    return section('lifetimes', 'Handle lifetimes', out);
  }

  function ganttChart(items, count) {
    const W = 1100, rowH = 16, L = 330, H = items.length * rowH + 40;
    const root = svg('svg', {class: 'chart', viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, role: 'img', 'aria-label': 'handle lifetimes'});
    const n = Math.max(1, count);
    const X = (i) => L + (Math.max(-1, Math.min(n, i)) / n) * (W - L - 10);
    items.forEach(({a, e}, j) => {
      const y = 4 + j * rowH;
      const label = '#' + a.rank + ' ' + e.address + (e.size_bytes ? ' ' + bytes(e.size_bytes) : '');
      root.appendChild(svgText(L - 6, y + 11, label, {'text-anchor': 'end', 'font-size': 11}));
      const end = e.free_iteration === null ? n : Math.min(n, e.free_iteration);
      const bar = svg('rect', {x: X(e.alloc_iteration), y: y + 2, width: Math.max(2, X(end) - X(e.alloc_iteration)), height: rowH - 5, fill: e.free_iteration === null ? '#d62728' : '#e08a2c'});
      bar.addEventListener('mousemove', (ev) => showTip(ev, e.address + ' (' + a.key + ')', [
        {text: 'allocated in iteration ' + e.alloc_iteration + ' by ' + e.api},
        {text: e.free_iteration === null ? 'never freed' : e.free_iteration >= count ? 'freed at tear-down, after the loop' : 'freed in iteration ' + e.free_iteration},
        {text: e.size_bytes ? bytes(e.size_bytes) : ''}]));
      bar.addEventListener('mouseleave', hideTip);
      root.appendChild(bar);
    });
    for (const t of niceTicks(0, n, 8)) root.appendChild(svgText(X(t), H - 20, Math.round(t), {'text-anchor': 'middle', 'font-size': 11, fill: '#5d6678'}));
    root.appendChild(svgText(L + (W - L - 10) / 2, H - 4, 'iteration', {'text-anchor': 'middle', 'font-size': 11, fill: '#5d6678'}));
    return root;
  }

  function kernelsSection(R) {
    const K = R.kernels, left = (R.page && R.page.left_out) || {};
    const out = [];
    if (!K.length) out.push(el('p', {class: 'muted'}, 'No kernel launches in the trace.'));
    else {
      const total = K.length + (left.kernels || 0);
      out.push(el('p', {class: 'muted'}, plural(total, 'kernel') + (left.kernels ? ' (the ' + K.length + ' with most GPU time shown)' : '') + ', most GPU time first. Mean duration is measured on the iterations where GPU records were taken; the others are gaps.'));
      out.push(table([
        {label: 'kernel', get: (k) => k.name, name: true},
        {label: 'launches', get: (k) => k.launches, show: (k) => num(k.launches), num: true},
        {label: 'executions', get: (k) => k.executions, show: (k) => num(k.executions), num: true},
        {label: 'GPU time', get: (k) => k.gpu_ms, show: (k) => ms(k.gpu_ms), num: true},
        {label: 'mean first', get: (k) => k.duration_trend.first, show: (k) => ms(k.duration_trend.first / 1000), num: true},
        {label: 'mean last', get: (k) => k.duration_trend.last, show: (k) => ms(k.duration_trend.last / 1000), num: true},
        {label: 'change', get: (k) => (k.duration_trend.tested ? k.duration_trend.change_pct : null), show: (k) => (k.duration_trend.tested ? pct(k.duration_trend.change_pct) : '–'), num: true},
        {label: 'mean duration', show: (k) => sparkline(k.mean_us, (v) => ms(v / 1000), k.slowing ? '#d62728' : null)},
        {label: '', get: (k) => (k.slowing ? 1 : 0), show: (k) => (k.slowing ? el('span', {class: 'badge bad'}, 'slowing') : '')},
      ], K, {sortCol: 3, dir: -1}));
      const top = K.filter((k) => k.gpu_ms_per_iter).slice(0, 8);
      if (top.length) out.push(el('h3', null, 'GPU time per iteration, top kernels'), lineChart({series: top.map((k) => ({name: k.name, s: S(k.gpu_ms_per_iter)})), fmt: ms, height: 220, alwaysLegend: true,
        label: 'GPU time per iteration', empty: 'No GPU records were taken (kernel timing off): GPU times are unknown, not zero.'}));
    }
    if (R.apis.length) {
      out.push(el('h3', null, 'CUDA API calls'));
      out.push(table([
        {label: 'API', get: (a) => a.name, name: true},
        {label: 'calls', get: (a) => a.calls, show: (a) => num(a.calls), num: true},
        {label: 'time', get: (a) => a.ms, show: (a) => ms(a.ms), num: true},
        {label: 'change', get: (a) => (a.trend.tested ? a.trend.change_pct : null), show: (a) => (a.trend.tested ? pct(a.trend.change_pct) : '–'), num: true},
      ], R.apis, {sortCol: 2, dir: -1}));
    }
    return section('kernels', 'Kernels', out);
  }

  function overheadSection(R) {
    const o = R.overhead;
    const reasons = Object.keys(o.drops_by_reason).map((k) => ({reason: k, count: o.drops_by_reason[k]}));
    return section('overhead', 'Profiler overhead and drops',
      el('div', null,
        stat('profiler time', ms(o.self_ms_total)),
        stat('of the run\'s wall time', num(o.self_pct_of_wall, 3) + '%'),
        stat('events recorded', num(o.recorded_events)),
        stat('events dropped', num(o.dropped), o.dropped > 0 ? 'badge warn' : null),
        stat('recording pauses', num(o.recording_pauses))),
      o.overhead_climbing ? el('div', {class: 'banner warn'}, 'The profiler\'s own cost per event climbs: part of a climb may be cuclimb\'s.') : null,
      reasons.length ? table([{label: 'drop reason', get: (r) => r.reason}, {label: 'events', get: (r) => r.count, num: true}], reasons) : el('p', {class: 'muted', id: 'no-drops'}, 'No events were dropped.'),
      el('div', {class: 'grid2'},
        lineChart({series: [{name: 'profiler time per iteration', s: S(o.self_ms)}], fmt: ms, width: 560, height: 180, alwaysLegend: true, label: 'profiler overhead',
          zero: 'The profiler recorded no time of its own.'}),
        lineChart({series: [{name: 'dropped events per iteration', s: S(o.drops), color: '#d62728'}], fmt: num, width: 560, height: 180, alwaysLegend: true, label: 'drops',
          zero: 'No events were dropped in any iteration.'})));
  }

  function renderRank(R, into, D, showNotes) {
    into.textContent = '';
    const state = {selectRange: () => {}};
    const parts = [accumulatorsSection(R, D)];
    if (showNotes && R.notes.length) parts.push(el('ul', {class: 'notes'}, R.notes.map((n) => el('li', null, n))));
    parts.push(rangesSection(R, state), decompositionSection(R, state), stateSection(R), lifetimesSection(R, D), kernelsSection(R), overheadSection(R));
    append(into, parts);
  }

  // Where a merged accumulator lives: "rank 1 (+2 allocations/iter)", "ranks 0, 3 (+1, +1 …)".
  function livesOn(a) {
    const on = (a.by_rank || []).filter((r) => r.lives);
    if (!on.length) return '';
    const growth = on.map((r) => (r.growth_per_iter === null ? '?' : (r.growth_per_iter >= 0 ? '+' : '') + num(r.growth_per_iter, 3)));
    return (on.length === 1 ? 'rank ' : 'ranks ') + on.map((r) => r.rank).join(', ') + ' (' + growth.join(', ') + ' ' + a.unit + '/iter)' +
      (on.length < a.by_rank.length ? '; not on the others' : '');
  }

  function renderReport(D, app) {
    append(app, header(D));
    const body = el('div', {id: 'rank-body'});
    const multi = D.ranks.length > 1;
    let sel = null;
    if (multi) {
      sel = el('select', {id: 'rank-select', 'aria-label': 'rank'});
      // Job ranks (the recorded ones) name the traces, as in the text report.
      const jobRank = (k) => (D.job_ranks && D.job_ranks[k] !== undefined ? D.job_ranks[k] : D.ranks[k].index);
      D.ranks.forEach((r, k) => sel.appendChild(el('option', {value: k}, 'rank ' + jobRank(k) + ': ' + r.trace.path)));
      sel.addEventListener('change', () => renderRank(D.ranks[Number(sel.value)], body, D, true));
      app.appendChild(el('div', {class: 'controls'}, el('label', null, 'show ', sel)));
    }
    app.appendChild(body);
    if (D.ranks.length) renderRank(D.ranks[0], body, D, multi);
    append(app, runSummary(D));
    if (multi) {
      const across = [];
      if (D.straggler) across.push(el('div', {class: 'banner bad', id: 'straggler'}, 'Straggler: ' + D.straggler.summary));
      across.push(table([
        {label: 'range', get: (r) => r.name, name: true},
        {label: 'first', get: (r) => r.first_ms, show: (r) => ms(r.first_ms), num: true},
        {label: 'last', get: (r) => r.last_ms, show: (r) => ms(r.last_ms), num: true},
        {label: 'climb', get: (r) => r.climb_pct, show: (r) => pct(r.climb_pct), num: true},
        {label: 'climbing', get: (r) => (r.climbing ? 1 : 0), show: (r) => (r.climbing ? 'yes' : 'no')},
        {label: 'on the ranks', get: (r) => (r.climb_by_rank ? r.climb_by_rank.pattern : ''), show: (r) => (r.climb_by_rank ? r.climb_by_rank.summary : '')},
      ], D.ranges));
      if (D.accumulators.length) {
        across.push(table([
          {label: '#', get: (a) => a.rank, num: true},
          {label: 'accumulator', get: (a) => a.id, name: true},
          {label: 'growth/iter', get: (a) => a.growth_per_iter, show: (a) => num(a.growth_per_iter) + ' ' + a.unit, num: true},
          {label: 'lives on', get: (a) => livesOn(a)},
        ], D.accumulators));
      }
      app.appendChild(section('across', 'Across ranks', across));
    }
  }

  // ---- The diff page ---------------------------------------------------------------------------

  function diffRows(list, title, id, note) {
    if (!list.length) return section(id, title, el('p', {class: 'muted'}, 'Nothing to compare.'));
    const fmtOf = (e) => byUnit(e.unit);
    const cols = [
      {label: 'key', get: (e) => e.key, name: true},
      {label: 'metric', get: (e) => e.metric},
      {label: 'status', get: (e) => e.status},
      {label: 'base first → last', get: (e) => (e.base ? e.base.last : null), show: (e) => (e.base ? fmtOf(e)(e.base.first) + ' → ' + fmtOf(e)(e.base.last) : '–'), num: true},
      {label: 'other first → last', get: (e) => (e.other ? e.other.last : null), show: (e) => (e.other ? fmtOf(e)(e.other.first) + ' → ' + fmtOf(e)(e.other.last) : '–'), num: true},
      {label: 'Δ last', get: (e) => e.delta_last, show: (e) => fmtOf(e)(e.delta_last) + (e.delta_pct !== null ? ' (' + pct(e.delta_pct) + ')' : ''), num: true},
      {label: 'diverges at', get: (e) => e.diverges_at, show: (e) => (e.diverges_at === null ? '–' : 'iteration ' + e.diverges_at), num: true},
    ];
    const chartBox = el('div');
    function show(e) {
      chartBox.textContent = '';
      chartBox.appendChild(el('h3', null, e.key));
      chartBox.appendChild(lineChart({series: [{name: 'base', s: S(e.base_series), color: COLORS[0]}, {name: 'other', s: S(e.other_series), color: COLORS[1]}],
        fmt: fmtOf(e), height: 220, alwaysLegend: true, markers: [{at: e.diverges_at, text: 'diverges'}], label: id + ' ' + e.key,
        empty: 'Series left out of the page (only the first diverging entries carry them).'}));
    }
    const first = list.find((e) => e.base_series || e.other_series);
    if (first) show(first);
    return section(id, title, note ? el('p', {class: 'muted'}, note) : null, table(cols, list, {onRow: show}), chartBox);
  }

  function renderDiff(D, app) {
    const b = D.base, o = D.other;
    const fd = D.first_divergence;
    app.appendChild(el('h1', null, 'cuclimb diff'));
    app.appendChild(el('dl', {class: 'summary'},
      el('dt', null, 'base'), el('dd', {class: 'mono'}, b.path + ' — ' + b.program + ' (' + b.iterations + ' iterations, ' + b.verdict + ')'),
      el('dt', null, 'other'), el('dd', {class: 'mono'}, o.path + ' — ' + o.program + ' (' + o.iterations + ' iterations, ' + o.verdict + ')'),
      el('dt', null, 'aligned'), el('dd', null, D.alignment.iterations + ' iterations by ' + D.alignment.by),
      el('dt', null, 'verdict'), el('dd', null, el('span', {class: 'badge ' + (D.verdict === 'same' ? 'good' : 'bad'), id: 'verdict'}, D.verdict))));
    app.appendChild(el('div', {class: 'banner ' + (fd ? 'bad' : 'good'), id: 'first-divergence'}, D.summary));
    if (fd && fd.items.length) app.appendChild(el('ul', null, fd.items.map((it) => el('li', null, it.section + ' ' + it.metric + ' ' + it.key + ': ' + it.what))));
    if (D.notes.length) app.appendChild(el('ul', {class: 'notes'}, D.notes.map((n) => el('li', null, n))));
    app.appendChild(diffRows(D.ranges, 'Ranges (step time per iteration)', 'ranges', 'Robust first and last levels of each run; a range diverges where the smoothed levels differ by more than the tolerance for several iterations in a row. Click a row to overlay the two runs.'));
    app.appendChild(diffRows(D.accumulators, 'Accumulators', 'accumulators', 'Accumulators of either run by id: new in the other run, gone from it, or in both.'));
    app.appendChild(diffRows(D.census, 'Allocation census (calls per iteration)', 'census'));
    app.appendChild(diffRows(D.handles, 'Live handles and bytes', 'handles'));
    app.appendChild(diffRows(D.kernels, 'Kernels', 'kernels'));
  }

  // ---- Start -----------------------------------------------------------------------------------

  function start() {
    const t0 = performance.now();
    const app = document.getElementById('app');
    const D = JSON.parse(document.getElementById('cuclimb-data').textContent);
    app.textContent = '';
    if (D.page === 'diff') renderDiff(D, app);
    else renderReport(D, app);
    const foot = el('footer', null, 'cuclimb ' + (D.schema || '') + '. ');
    const left = D.page && D.page.series_left_out !== undefined ? D.page.series_left_out : D.series_left_out;
    if (left > 0) foot.appendChild(document.createTextNode(left + ' per-iteration series were left out to keep this file small; the JSON report has them all.'));
    app.appendChild(foot);
    document.body.setAttribute('data-ready', '1');
    document.body.setAttribute('data-render-ms', String(Math.round(performance.now() - t0)));
    // From navigation start: loading, parsing and drawing (the browser test's load time).
    document.body.setAttribute('data-ready-ms', String(Math.round(performance.now())));
  }
  start();
})();
