// The ratelim playground: the page around the simulator compiled to
// WebAssembly. Plain script, no framework, no build step, no request: the
// simulator arrives gzipped and base64'd in ratelim-wasm.js
// (window.RATELIM_WASM_GZ_B64), so the same page works from file://, a
// loopback server and any static host.
//
// The simulator is reached through the bridge globalThis.ratelim (Contract
// 3): every call takes and returns a string of JSON and never throws for bad
// input. A run is synchronous and blocks the page while it computes, so this
// file never starts a run from inside another: a change marks the state
// dirty, and one scheduled run takes the latest state.
//
// Text that comes from a scenario (names, errors, YAML) reaches the page only
// through textContent and value. The SVGs come from ratelim's own Go code;
// they are parsed as image/svg+xml, not assigned as HTML.
(function () {
  'use strict';

  const GROUPS = [
    ['limit', 'Limit'],
    ['topology', 'Topology'],
    ['faults', 'Faults'],
    ['traffic', 'Traffic'],
  ];
  const DEFAULT_BUILTIN = 'runaway-healthcheck';
  const YAML_DEBOUNCE_MS = 300;
  const MAX_FILE_BYTES = 1 << 20; // what a permalink can carry (Decode's bound)
  const MAX_WASM_BYTES = 256 << 20;
  const PLAY_SECONDS = 12; // a whole run plays in about this long

  const $ = (id) => document.getElementById(id);
  const numbers = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });

  // page is everything the page remembers between events.
  const page = {
    state: { builtin: DEFAULT_BUILTIN, yaml: '', file: '', set: [], vs: [], predict: false },
    builtins: [],
    sources: Object.create(null), // a built-in's text, once a run has shown it
    last: null,                   // the last Response that ran (no error)
    lastResponse: null,           // the last Response, error or not
    controls: [],                 // the last Response's controls
    controlsKey: '',
    runs: 0,
    runScheduled: false,
    yamlTimer: 0,
    revealed: false,
    frameT: null,
    frameRaf: 0,
    framesShown: false,
    playing: false,
    playStart: 0,
    playFrom: 0,
    playRaf: 0,
    hash: '',
    yamlOpenBeforePredict: true,
  };

  // ---------- small helpers ----------

  function setBodyState(s) { document.body.dataset.state = s; }
  function status(text) { $('status').textContent = text; }

  function el(tag, props, ...children) {
    const e = document.createElement(tag);
    if (props) {
      for (const [k, v] of Object.entries(props)) {
        if (v === undefined || v === null || v === false) continue;
        if (k === 'class') e.className = v;
        else if (k === 'text') e.textContent = v;
        else if (k === 'dataset') Object.assign(e.dataset, v);
        else if (k in e && typeof v !== 'string') e[k] = v;
        else e.setAttribute(k, v === true ? '' : String(v));
      }
    }
    for (const c of children) {
      if (c === null || c === undefined || c === false) continue;
      e.append(typeof c === 'string' ? document.createTextNode(c) : c);
    }
    return e;
  }

  // call asks the bridge and parses its answer; a throw or unreadable answer
  // becomes an error the page shows like any other.
  function call(fn, ...args) {
    const bridge = globalThis.ratelim;
    if (!bridge || typeof bridge[fn] !== 'function') {
      return { error: { text: `internal error: the simulator has no ${fn}()` } };
    }
    let out;
    try {
      out = bridge[fn](...args);
    } catch (e) {
      return { error: { text: `internal error: ${fn}: ${e && e.message ? e.message : e}` } };
    }
    if (typeof out !== 'string') return out;
    try {
      return JSON.parse(out);
    } catch (e) {
      return { error: { text: `internal error: ${fn} answered something that is not JSON` } };
    }
  }

  function fmtNum(v) {
    if (typeof v !== 'number' || !Number.isFinite(v)) return v === undefined || v === null ? '' : String(v);
    return numbers.format(v);
  }

  // fmtSeconds writes a time in the run as a person reads it: "12 s",
  // "2 m 05 s", "1 h 02 m".
  function fmtSeconds(t) {
    if (!Number.isFinite(t)) return '';
    if (t < 120) {
      const r = Math.round(t * 10) / 10;
      return `${Number.isInteger(r) ? r : r.toFixed(1)} s`;
    }
    const s = Math.round(t);
    if (s < 7200) return `${Math.floor(s / 60)} m ${String(s % 60).padStart(2, '0')} s`;
    return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} m`;
  }

  // Go's time.ParseDuration, in seconds ("1h2m", "500us", "1.5s"); NaN when
  // it is not one.
  const DURATION_UNITS = { ns: 1e-9, us: 1e-6, 'µs': 1e-6, 'μs': 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };
  function parseDuration(text) {
    let s = String(text).trim();
    if (s === '0') return 0;
    let sign = 1;
    if (s[0] === '-' || s[0] === '+') { sign = s[0] === '-' ? -1 : 1; s = s.slice(1); }
    if (s === '') return NaN;
    const part = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;
    let total = 0;
    let i = 0;
    while (i < s.length) {
      part.lastIndex = i;
      const m = part.exec(s);
      if (!m) return NaN;
      total += parseFloat(m[1]) * DURATION_UNITS[m[2]];
      i = part.lastIndex;
    }
    return sign * total;
  }

  function unitSeconds(unit) { return DURATION_UNITS[unit || 's'] || 1; }

  // decimalsOf is how many decimals a slider step has, so that positions
  // are written without float noise (0.30000000000000004).
  function decimalsOf(step) {
    const s = String(step);
    if (/e-/.test(s)) return Number(s.split('e-')[1]);
    const dot = s.indexOf('.');
    return dot < 0 ? 0 : s.length - dot - 1;
  }
  function trimNumber(v, decimals) {
    return String(Number(v.toFixed(Math.min(decimals, 9))));
  }

  // ---------- controls: a value as a slider position and back ----------

  // sliderPosition is the control's value as a number on its slider (an
  // int, or a duration in the control's unit); NaN when it is not one.
  function sliderPosition(ctl, value) {
    if (ctl.kind === 'int') {
      const v = String(value).trim();
      return /^[+-]?\d+$/.test(v) ? Number(v) : NaN;
    }
    const secs = parseDuration(value);
    return Number.isFinite(secs) ? secs / unitSeconds(ctl.unit) : NaN;
  }
  function sliderValue(ctl, position) {
    if (ctl.kind === 'int') return String(Math.round(position));
    return trimNumber(position, decimalsOf(ctl.step || 1)) + (ctl.unit || 's');
  }
  function displayValue(ctl, value) {
    if (ctl.kind === 'int') {
      const n = sliderPosition(ctl, value);
      return Number.isFinite(n) ? fmtNum(n) : String(value);
    }
    if (ctl.kind === 'duration') {
      const p = sliderPosition(ctl, value);
      if (!Number.isFinite(p)) return String(value);
      const unit = (ctl.unit || 's') === 'us' ? 'µs' : (ctl.unit || 's');
      return `${trimNumber(p, decimalsOf(ctl.step || 1) + 3)} ${unit}`;
    }
    return String(value);
  }
  // sameValue reports whether two values of a control are the same setting
  // ("1s" and "1000ms" are).
  function sameValue(ctl, a, b) {
    if (String(a) === String(b)) return true;
    if (ctl && (ctl.kind === 'int' || ctl.kind === 'duration')) {
      const x = sliderPosition(ctl, a);
      const y = sliderPosition(ctl, b);
      return Number.isFinite(x) && Number.isFinite(y) && Math.abs(x - y) < 1e-9;
    }
    return false;
  }

  function controlNamed(name) { return page.controls.find((c) => c.name === name); }
  function settingOf(name) {
    const s = page.state.set.find((x) => x.name === name);
    return s ? s.value : undefined;
  }

  // ---------- loading the simulator ----------

  function base64Bytes(b64) {
    const bin = atob(b64);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  }

  // gunzip inflates gz, telling onProgress the share of it read so far.
  async function gunzip(gz, onProgress) {
    const chunk = 1 << 18;
    let offset = 0;
    const source = new ReadableStream({
      pull(ctrl) {
        if (offset >= gz.length) { ctrl.close(); return; }
        const end = Math.min(offset + chunk, gz.length);
        ctrl.enqueue(gz.subarray(offset, end));
        offset = end;
        onProgress(offset / gz.length);
      },
    });
    const reader = source.pipeThrough(new DecompressionStream('gzip')).getReader();
    const parts = [];
    let total = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.length;
      if (total > MAX_WASM_BYTES) throw new Error('the simulator is larger than 256 MiB unpacked: ratelim-wasm.js is not what ratelim web wrote');
      parts.push(value);
    }
    const out = new Uint8Array(total);
    let at = 0;
    for (const p of parts) { out.set(p, at); at += p.length; }
    return out;
  }

  function loadingProgress(text, share) {
    $('loading-text').textContent = text;
    status(text);
    const bar = $('load-progress');
    if (share === null) bar.removeAttribute('value');
    else bar.value = Math.round(share * 100);
  }
  const nextPaint = () => new Promise((r) => setTimeout(r, 0));

  async function loadSimulator() {
    const b64 = window.RATELIM_WASM_GZ_B64;
    if (typeof b64 !== 'string' || b64 === '') {
      throw new Error('ratelim-wasm.js did not load: the page needs it beside index.html (ratelim web --export DIR writes both)');
    }
    if (typeof window.Go !== 'function') {
      throw new Error('wasm_exec.js did not load: the page needs it beside index.html (ratelim web --export DIR writes both)');
    }
    if (typeof DecompressionStream !== 'function' || typeof WebAssembly !== 'object') {
      throw new Error('this browser cannot unpack the simulator (it needs WebAssembly and DecompressionStream): try a current Firefox, Chrome, Edge or Safari');
    }
    // How long each step took, for whoever measures the page (ms).
    const took = { bytes: 0, inflateMs: 0, compileMs: 0, startMs: 0 };
    window.ratelimLoad = took;
    loadingProgress('loading the simulator… unpacking', 0);
    await nextPaint();
    let t = performance.now();
    const gz = base64Bytes(b64);
    const wasm = await gunzip(gz, (share) => loadingProgress(`loading the simulator… ${Math.round(share * 100)}%`, share));
    took.bytes = wasm.length;
    took.inflateMs = performance.now() - t;
    loadingProgress('loading the simulator… compiling', null);
    await nextPaint();
    t = performance.now();
    const go = new window.Go();
    const ready = new Promise((resolve) => { window.ratelimReady = resolve; });
    const { instance } = await WebAssembly.instantiate(wasm, go.importObject);
    took.compileMs = performance.now() - t;
    loadingProgress('loading the simulator… starting', null);
    t = performance.now();
    const exited = go.run(instance).then(() => { throw new Error('the simulator stopped'); });
    await Promise.race([ready, exited]);
    took.startMs = performance.now() - t;
    if (!globalThis.ratelim) throw new Error('the simulator started but offered no ratelim bridge');
  }

  function fatal(err) {
    const text = `The playground could not start: ${err && err.message ? err.message : err}`;
    $('loading-text').textContent = text;
    $('load-progress').hidden = true;
    status(text);
    setBodyState('error');
    $('yaml-error').textContent = text;
    $('yaml-error-box').hidden = false;
    $('goto-error').hidden = true;
  }

  // ---------- state, permalink ----------

  // stateForRun is page.state as Contract 2's State: empty fields left out.
  function stateForRun() {
    const s = page.state;
    const out = {};
    if (s.builtin) out.builtin = s.builtin;
    else out.yaml = s.yaml;
    if (s.file) out.file = s.file;
    if (s.set.length) out.set = s.set.map((x) => ({ name: x.name, value: x.value }));
    if (s.vs.length) out.vs = s.vs.map((x) => ({ name: x.name, value: x.value }));
    if (s.predict) out.predict = true;
    return out;
  }

  function updateHash() {
    const enc = call('encode', JSON.stringify(stateForRun()));
    if (enc.error) {
      status(`the link cannot carry this scenario: ${enc.error.text}`);
      return false;
    }
    const hash = '#' + enc.fragment;
    if (hash !== page.hash || location.hash !== hash) {
      page.hash = hash;
      try {
        history.replaceState(history.state, '', hash);
      } catch (e) {
        // Some browsers refuse replaceState on file://; the link still copies.
      }
    }
    return true;
  }

  // openFragment reads a permalink's state; false (and a message) when it
  // cannot.
  function openFragment(fragment) {
    const dec = call('decode', fragment);
    if (dec.error || !dec.state) {
      showNotice(`This link's scenario could not be read (${dec.error ? dec.error.text : 'no state'}); showing ${DEFAULT_BUILTIN} instead.`);
      return false;
    }
    const s = dec.state;
    cancelYamlEdit();
    page.state = {
      builtin: s.builtin || '',
      yaml: s.builtin ? '' : (s.yaml || ''),
      file: s.file || '',
      set: Array.isArray(s.set) ? s.set.map((x) => ({ name: String(x.name), value: String(x.value) })) : [],
      vs: Array.isArray(s.vs) ? s.vs.map((x) => ({ name: String(x.name), value: String(x.value) })) : [],
      predict: !!s.predict,
    };
    if (!page.state.builtin && !page.state.yaml) page.state.builtin = DEFAULT_BUILTIN;
    page.revealed = false;
    page.hash = '#' + fragment;
    if (!page.state.builtin) setYamlText(page.state.yaml);
    syncModeInputs();
    return true;
  }

  function showNotice(text) {
    const note = $('download-note');
    status(text);
    note.textContent = text;
    note.hidden = false;
  }

  // ---------- running ----------

  // requestRun marks the state changed; one run, of the latest state, follows
  // once the page has painted "running".
  function requestRun() {
    setBodyState('running');
    status('running…');
    if (page.runScheduled) return;
    page.runScheduled = true;
    requestAnimationFrame(() => setTimeout(runNow, 0));
    setTimeout(runNow, 50); // in a hidden tab requestAnimationFrame waits
  }

  function runNow() {
    if (!page.runScheduled) return;
    page.runScheduled = false;
    stopPlaying();
    const state = stateForRun();
    const t0 = performance.now();
    const resp = call('run', JSON.stringify(state));
    const ms = performance.now() - t0;
    page.runs += 1;
    try {
      render(resp, ms);
    } catch (e) {
      resp.error = resp.error || { text: `internal error: the page could not show the run: ${e.message}` };
      showError(resp.error);
    }
    updateHash();
    window.ratelimLast = resp;
    document.body.dataset.runs = String(page.runs);
    setBodyState(resp.error ? 'error' : 'ready');
    // A change made while the page was busy has its own run queued already.
    if (page.runScheduled) setBodyState('running');
  }

  function render(resp, ms) {
    page.lastResponse = resp;
    if (resp.scenario) renderScenario(resp.scenario);
    if (Array.isArray(resp.controls)) renderControls(resp.controls);
    renderQuestion(resp);
    if (resp.error) {
      showError(resp.error);
      const stale = $('stale-note');
      stale.textContent = page.last ? 'This is the last run that worked: the scenario as it is now has an error (see the left).' : '';
      stale.hidden = !page.last;
      $('results').classList.toggle('stale', true);
      status(`nothing ran: the scenario has an error (${Math.round(ms)} ms)`);
      return;
    }
    clearError();
    page.last = resp;
    document.body.classList.add('has-result');
    $('results').classList.remove('stale');
    $('stale-note').hidden = true;
    renderResults(resp);
    renderVs(resp.vs);
    applyPredictView();
    const name = resp.scenario ? resp.scenario.name : '';
    document.title = name ? `${name} · ratelim playground` : 'ratelim playground';
    status(`${name ? name + ' · ' : ''}ran in ${Math.round(ms)} ms`);
  }

  // ---------- the scenario: picker, YAML ----------

  function renderBuiltins() {
    const list = call('builtins');
    page.builtins = Array.isArray(list) ? list : [];
    const sel = $('builtin');
    sel.replaceChildren(el('option', { value: '', text: '— your own YAML —' }));
    for (const b of page.builtins) sel.append(el('option', { value: b.name, text: b.name }));
    sel.disabled = false;
  }

  function renderScenario(sc) {
    const sel = $('builtin');
    sel.value = page.state.builtin || '';
    const custom = sel.options[0];
    custom.textContent = page.state.builtin ? '— your own YAML —' : `— your own: ${page.state.file || sc.name || 'scenario.yaml'} —`;
    const info = page.builtins.find((b) => b.name === page.state.builtin);
    $('builtin-summary').textContent = info ? info.summary : (sc.summary || '');
    if (page.state.builtin && typeof sc.source === 'string') {
      page.sources[page.state.builtin] = sc.source;
      // Never over what someone is typing (an edit waiting for its run).
      if (!page.yamlTimer && $('yaml').value !== sc.source) setYamlText(sc.source);
    }
  }

  function setYamlText(text) {
    const ta = $('yaml');
    ta.value = text;
    renderGutter();
  }

  // renderGutter numbers the editor's lines, bad (when given) marked; it
  // rebuilds only when the count or the mark changed, so typing in a long
  // file stays quick.
  function renderGutter(badLine) {
    const ta = $('yaml');
    const g = $('gutter');
    let n = 1;
    for (let i = ta.value.indexOf('\n'); i >= 0; i = ta.value.indexOf('\n', i + 1)) n++;
    const bad = badLine === undefined ? Number(g.dataset.bad || 0) : badLine;
    if (Number(g.dataset.lines) !== n || Number(g.dataset.bad || 0) !== bad) {
      const frag = document.createDocumentFragment();
      for (let i = 1; i <= n; i++) {
        const s = document.createElement('span');
        s.textContent = String(i);
        if (i === bad) s.className = 'bad';
        frag.append(s);
      }
      g.replaceChildren(frag);
      g.dataset.lines = String(n);
      g.dataset.bad = String(bad || 0);
    }
    g.scrollTop = ta.scrollTop;
  }

  function showError(err) {
    $('yaml-error').textContent = err.text || 'error';
    $('yaml-error-box').hidden = false;
    const line = Number(err.line) || 0;
    // A line is always the editor's: a built-in's own text has no error, and
    // a setting's error has no line.
    const inEditor = line > 0;
    $('goto-error').hidden = !inEditor;
    $('goto-error').textContent = inEditor ? `Go to line ${line}` : '';
    $('goto-error').dataset.line = String(inEditor ? line : 0);
    renderGutter(inEditor ? line : 0);
    if (inEditor && $('yaml-panel').open) scrollGutterTo(line);
    // A setting's error names it as the CLI's flag does: "--set limit.rate".
    const m = /^(?:--(set|vs) )?(.*)$/.exec(err.field || '');
    const field = m ? m[2] : '';
    const ofVs = m && m[1] === 'vs';
    for (const node of document.querySelectorAll('#controls [data-setting]')) {
      const hit = !ofVs && field !== '' && node.dataset.setting === field;
      if (hit) node.setAttribute('aria-invalid', 'true');
      else node.removeAttribute('aria-invalid');
      const msg = node.closest('.control').querySelector('.control-error');
      msg.textContent = hit ? `✗ ${err.text}` : '';
      msg.hidden = !hit;
    }
    if (ofVs) $('vs-value').setAttribute('aria-invalid', 'true');
    else $('vs-value').removeAttribute('aria-invalid');
  }

  function clearError() {
    $('yaml-error').textContent = '';
    $('yaml-error-box').hidden = true;
    renderGutter(0);
    for (const node of document.querySelectorAll('#controls [aria-invalid], #vs-value')) node.removeAttribute('aria-invalid');
    for (const msg of document.querySelectorAll('#controls .control-error')) { msg.textContent = ''; msg.hidden = true; }
  }

  // scrollGutterTo brings line into the editor's view without moving the
  // caret of someone typing.
  function scrollGutterTo(line) {
    const ta = $('yaml');
    const lh = ta.scrollHeight / Math.max(1, ta.value.split('\n').length);
    const top = (line - 1) * lh;
    if (top < ta.scrollTop || top > ta.scrollTop + ta.clientHeight - lh) {
      ta.scrollTop = Math.max(0, top - ta.clientHeight / 3);
    }
  }

  function gotoLine(line) {
    const ta = $('yaml');
    const lines = ta.value.split('\n');
    let start = 0;
    for (let i = 0; i < line - 1 && i < lines.length; i++) start += lines[i].length + 1;
    const end = start + (lines[line - 1] || '').length;
    $('yaml-panel').open = true;
    ta.focus({ preventScroll: true });
    ta.setSelectionRange(start, end);
    scrollGutterTo(line);
    $('gutter').scrollTop = ta.scrollTop;
    document.querySelector('.editor').scrollIntoView({ block: 'nearest' });
  }

  function onYamlInput() {
    renderGutter();
    setBodyState('running');
    status('running… (as you stop typing)');
    clearTimeout(page.yamlTimer);
    page.yamlTimer = setTimeout(() => {
      page.yamlTimer = 0;
      const text = $('yaml').value;
      // The built-in's own text, typed back: its name is the shorter link.
      const name = Object.keys(page.sources).find((n) => page.sources[n] === text);
      if (name && !page.state.file) {
        page.state.builtin = name;
        page.state.yaml = '';
      } else {
        page.state.builtin = '';
        page.state.yaml = text;
      }
      changed({ keepGuess: false });
    }, YAML_DEBOUNCE_MS);
  }

  // cancelYamlEdit drops an edit waiting for its run: what replaces the
  // text (a built-in, a file, a link) wins.
  function cancelYamlEdit() {
    clearTimeout(page.yamlTimer);
    page.yamlTimer = 0;
  }

  function onLoadFile(ev) {
    const f = ev.target.files && ev.target.files[0];
    ev.target.value = '';
    if (f) loadFile(f);
  }

  // loadFile opens a file the user chose or dropped on the editor.
  function loadFile(f) {
    if (f.size > MAX_FILE_BYTES) {
      showNotice(`${f.name} is ${fmtNum(f.size)} bytes: the playground takes files up to 1 MiB (run it with the CLI: ratelim sim ${f.name}).`);
      return;
    }
    f.text().then((text) => {
      cancelYamlEdit();
      page.state = { builtin: '', yaml: text, file: f.name, set: [], vs: [], predict: page.state.predict };
      syncModeInputs();
      setYamlText(text);
      $('download-note').hidden = true;
      changed({ keepGuess: false });
    }, (e) => showNotice(`${f.name} could not be read: ${e.message}`));
  }

  function downloadYaml() {
    const note = $('download-note');
    note.hidden = true;
    const r = page.lastResponse;
    let text = '';
    let name = page.state.file || (page.state.builtin ? `${page.state.builtin}.yaml` : 'scenario.yaml');
    if (!/\.ya?ml$/i.test(name)) name += '.yaml';
    if (r && r.error) {
      // Nothing ran: what they typed is what they want to keep.
      text = $('yaml').value;
    } else if (r && r.scenario && r.scenario.written) {
      text = r.scenario.written;
    } else if (r && r.scenario) {
      note.replaceChildren(
        el('span', { text: `This run cannot be written as one YAML file: ${r.scenario.writtenError || 'no text'}. Run it from a terminal instead: ` }),
        el('code', { text: r.command || '' }),
      );
      note.hidden = false;
      return;
    } else {
      return;
    }
    const url = URL.createObjectURL(new Blob([text], { type: 'text/yaml' }));
    const a = el('a', { href: url, download: name });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
    status(`downloaded ${name}`);
  }

  // ---------- controls ----------

  function renderControls(controls) {
    page.controls = controls;
    const key = controls.map((c) => `${c.name}|${c.kind}|${c.min}|${c.max}|${c.step}|${c.unit}|${(c.choices || []).join(',')}`).join('\n');
    if (key !== page.controlsKey) {
      page.controlsKey = key;
      buildControls(controls);
      renderVsSettings();
    }
    for (const c of controls) updateControl(c);
    $('reset-all').disabled = page.state.set.length === 0;
  }

  function buildControls(controls) {
    const box = $('controls');
    const sets = [];
    for (const [group, title] of GROUPS) {
      const mine = controls.filter((c) => c.group === group);
      if (mine.length) sets.push(buildGroup(title, mine));
    }
    const others = controls.filter((c) => !GROUPS.some(([g]) => g === c.group));
    if (others.length) sets.push(buildGroup('Other', others));
    if (!sets.length) sets.push(el('p', { class: 'help', text: 'This scenario has no settings to change here: edit its YAML.' }));
    box.replaceChildren(...sets);
  }

  function buildGroup(title, controls) {
    const fs = el('fieldset', null, el('legend', { text: title }));
    controls.forEach((c) => fs.append(buildControl(c)));
    return fs;
  }

  let controlSerial = 0;
  function buildControl(c) {
    const id = `ctl-${++controlSerial}`;
    const helpId = `${id}-help`;
    const row = el('div', { class: 'control', dataset: { name: c.name } });
    const label = el('label', { for: id }, el('span', { text: c.label || c.name }));
    let input;
    let specials = [];
    const position = sliderPosition(c, c.value);
    const numeric = c.kind === 'int' || c.kind === 'duration';
    // A duration may also take a word ("never"): a checkbox beside its slider.
    if (numeric && Array.isArray(c.choices)) specials = c.choices.filter((ch) => !Number.isFinite(sliderPosition(c, ch)));
    const ranged = numeric && Number.isFinite(Number(c.min)) && Number.isFinite(Number(c.max)) && Number(c.max) > Number(c.min) &&
      (Number.isFinite(position) || specials.includes(c.value));
    if (ranged) {
      input = el('input', { type: 'range', id, min: String(c.min), max: String(c.max), step: String(c.step || 1) });
      const out = el('output', { class: 'value', for: id });
      label.append(out);
      const slid = () => onControl(c.name, sliderValue(controlNamed(c.name) || c, Number(input.value)));
      input.addEventListener('input', slid);
      input.addEventListener('change', slid);
      input.addEventListener('keydown', (e) => { if (e.key === 'Enter') e.preventDefault(); });
    } else if (c.kind === 'choice' && Array.isArray(c.choices) && c.choices.length) {
      input = el('select', { id });
      for (const ch of c.choices) input.append(el('option', { value: ch, text: ch }));
      input.addEventListener('change', () => onControl(c.name, input.value));
      input.addEventListener('input', () => onControl(c.name, input.value));
    } else {
      input = el('input', { type: 'text', id, spellcheck: 'false', autocomplete: 'off' });
      if (c.kind === 'rate') input.placeholder = 'e.g. 10/s, 600/m';
      const apply = () => onControl(c.name, input.value.trim());
      input.addEventListener('change', apply);
      input.addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); apply(); } });
    }
    input.dataset.setting = c.name;
    if (c.help) input.setAttribute('aria-describedby', helpId);
    const reset = el('button', { type: 'button', class: 'reset', text: 'reset', hidden: true });
    reset.addEventListener('click', () => {
      removeSetting(c.name);
      input.focus();
    });
    row.append(label, input, reset);
    if (ranged) {
      for (const word of specials) {
        const box = el('input', { type: 'checkbox', id: `${id}-${word}`, dataset: { special: word } });
        box.addEventListener('change', () => onControl(c.name, box.checked ? word : sliderValue(controlNamed(c.name) || c, Number(input.value))));
        row.append(el('div', { class: 'check special' }, box, el('label', { for: `${id}-${word}`, text: word })));
      }
    }
    if (c.help) row.append(el('p', { class: 'help', id: helpId, text: c.help }));
    row.append(el('p', { class: 'control-error', hidden: true }));
    return row;
  }

  // updateControl shows the value the run used, leaving alone an input the
  // user is typing in.
  function updateControl(c) {
    const input = document.querySelector(`#controls [data-setting="${CSS.escape(c.name)}"]`);
    if (!input) return;
    const row = input.closest('.control');
    const wanted = settingOf(c.name);
    // With no setting the next run is the file's: show the file's value,
    // not the last run's (which may be the setting just taken away).
    const fileHas = typeof c.fileValue === 'string' && c.fileValue !== '';
    const value = wanted !== undefined ? wanted : fileHas ? c.fileValue : c.value;
    const isChanged = wanted !== undefined;
    row.classList.toggle('is-changed', isChanged);
    const reset = row.querySelector('.reset');
    reset.hidden = !isChanged;
    reset.setAttribute('aria-label', `reset ${c.label || c.name} to the file's ${displayValue(c, c.fileValue)}`);
    const typing = document.activeElement === input && input.type === 'text';
    if (input.type === 'range') {
      const p = sliderPosition(c, value);
      if (Number.isFinite(p)) input.value = String(p);
      for (const box of row.querySelectorAll('[data-special]')) box.checked = box.dataset.special === value;
      input.classList.toggle('is-special', !Number.isFinite(p));
      const shown = displayValue(c, value);
      row.querySelector('output').textContent = shown;
      input.setAttribute('aria-valuetext', shown);
    } else if (input.tagName === 'SELECT') {
      if (![...input.options].some((o) => o.value === value)) input.append(el('option', { value, text: value }));
      input.value = value;
    } else if (!typing) {
      input.value = value;
    }
  }

  function onControl(name, value) {
    const c = controlNamed(name);
    const idx = page.state.set.findIndex((x) => x.name === name);
    const isFile = c && sameValue(c, value, c.fileValue);
    if (isFile) {
      if (idx < 0) { if (c) updateControl(c); return; }
      page.state.set.splice(idx, 1);
    } else if (idx >= 0) {
      if (page.state.set[idx].value === value) return;
      page.state.set[idx].value = value;
    } else {
      page.state.set.push({ name, value });
    }
    if (c) updateControl(c);
    $('reset-all').disabled = page.state.set.length === 0;
    changed({ keepGuess: false });
  }

  function removeSetting(name) {
    const idx = page.state.set.findIndex((x) => x.name === name);
    if (idx < 0) return;
    page.state.set.splice(idx, 1);
    const c = controlNamed(name);
    if (c) updateControl(c);
    $('reset-all').disabled = page.state.set.length === 0;
    changed({ keepGuess: false });
  }

  // changed follows every change of what runs: a prediction starts again,
  // and one run of the latest state follows.
  function changed(opts) {
    if (page.state.predict && !(opts && opts.keepGuess)) {
      page.revealed = false;
      clearGuess();
      applyPredictView();
    }
    requestRun();
  }

  // ---------- results ----------

  // putSVG shows an SVG of ours in box, scaled to its width. It is parsed as
  // SVG (never as HTML); scripts and handlers are dropped all the same.
  function putSVG(box, text, label) {
    if (!text) { box.replaceChildren(); return; }
    const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
    const svg = doc.documentElement;
    if (!svg || svg.localName !== 'svg' || doc.getElementsByTagName('parsererror').length) {
      box.replaceChildren(el('p', { class: 'help', text: 'The picture could not be drawn.' }));
      return;
    }
    for (const bad of svg.querySelectorAll('script, foreignObject')) bad.remove();
    for (const node of [svg, ...svg.querySelectorAll('*')]) {
      for (const attr of [...node.attributes]) {
        if (/^on/i.test(attr.name) || (/href$/i.test(attr.name) && !/^#/.test(attr.value))) node.removeAttribute(attr.name);
      }
    }
    if (!svg.getAttribute('viewBox')) {
      const w = parseFloat(svg.getAttribute('width'));
      const h = parseFloat(svg.getAttribute('height'));
      if (w > 0 && h > 0) svg.setAttribute('viewBox', `0 0 ${w} ${h}`);
    }
    svg.removeAttribute('width');
    svg.removeAttribute('height');
    // A picture taller than wide (a panel per client of many) keeps its
    // column's width and scrolls, rather than shrink to fit the screen.
    const vb = (svg.getAttribute('viewBox') || '').split(/[\s,]+/).map(Number);
    if (vb.length === 4 && vb[2] > 0 && vb[3] / vb[2] > 1) svg.classList.add('tall');
    svg.setAttribute('role', 'img');
    svg.setAttribute('aria-label', label);
    box.replaceChildren(document.importNode(svg, true));
  }

  function renderResults(resp) {
    $('headline').textContent = resp.headline || '';
    const dur = Number(resp.durationS || (resp.scenario && resp.scenario.durationS) || 0);
    putSVG($('timeline'), resp.timeline, 'The run over time: each client\'s requests allowed and rejected');
    page.framesShown = false;
    setupScrubber(dur, resp.scenario ? Number(resp.scenario.stepS) : 0);
    renderClients(resp.result);
    renderFindings(resp.findings);
    renderExpectations(resp.expectations);
    $('command').textContent = resp.command || '';
    // H1b: a run whose step was too fine for the tab ran at a coarser
    // one, and Response.notice says so (the command carries that --step).
    let notice = $('notice');
    if (!notice) {
      notice = el('p', { id: 'notice', class: 'notice' });
      $('timeline').before(notice);
    }
    notice.textContent = resp.notice || '';
    notice.hidden = !resp.notice;
  }

  const CLIENT_COLUMNS = [
    { key: 'sent', title: 'sent', always: true },
    { key: 'allowed', title: 'allowed', swatch: 'allowed', always: true },
    { key: 'rejected', title: 'rejected', swatch: 'rejected', always: true },
    { key: 'failed_open', title: 'failed open', swatch: 'failed', hint: 'admitted unchecked while the store was unreachable' },
    { key: 'failed_closed', title: 'failed closed', hint: 'refused because the store was unreachable' },
    { key: 'retries', title: 'retries' },
    { key: 'retries_allowed', title: 'retries allowed' },
    { key: 'max_allowed_1s', title: 'peak/1s', always: true, hint: 'the most admitted in any one second' },
    { key: 'ideal_allowed', title: 'ideal', always: true, hint: 'what one exact limiter would have admitted' },
    { key: 'p99', title: 'p99 ms', get: (c) => (c.latency_ms ? c.latency_ms.p99 : undefined), hint: '99th percentile latency' },
  ];

  function renderClients(result) {
    const table = $('clients');
    const clients = result && Array.isArray(result.clients) ? result.clients : [];
    const value = (col, c) => (col.get ? col.get(c) : c[col.key]);
    const cols = CLIENT_COLUMNS.filter((col) => col.always || clients.some((c) => { const v = value(col, c); return typeof v === 'number' && v !== 0; }));
    const showKey = clients.some((c) => c.key && c.key !== c.name);
    const head = el('tr', null, el('th', { scope: 'col', text: 'client' }));
    if (showKey) head.append(el('th', { scope: 'col', text: 'key' }));
    for (const col of cols) {
      const th = el('th', { scope: 'col', class: 'num', title: col.hint });
      if (col.swatch) th.append(el('span', { class: `swatch ${col.swatch}`, 'aria-hidden': 'true' }));
      th.append(col.title);
      head.append(th);
    }
    const body = el('tbody');
    for (const c of clients) {
      const tr = el('tr', null, el('th', { scope: 'row', text: c.name }));
      if (showKey) tr.append(el('td', { text: c.key || '' }));
      for (const col of cols) {
        const v = value(col, c);
        tr.append(el('td', { class: v === 0 ? 'num zero' : 'num', text: fmtNum(v) }));
      }
      body.append(tr);
    }
    const caption = el('caption', { text: result ? `The whole run: ${fmtSeconds(Number(result.duration_s))}, ${fmtNum(result.requests)} requests` : '' });
    table.replaceChildren(caption, el('thead', null, head), body);
  }

  function renderFindings(findings) {
    const ul = $('findings');
    const list = Array.isArray(findings) ? findings : [];
    if (!list.length) { ul.replaceChildren(el('li', { class: 'help', text: 'Nothing to report: every client got what one exact limiter would give it.' })); return; }
    ul.replaceChildren(...list.map((f) => el('li', null, el('span', { class: 'kind', text: f.kind || 'finding' }), f.text || '')));
  }

  function renderExpectations(exps) {
    const ul = $('expectations');
    const list = Array.isArray(exps) ? exps : [];
    const summary = $('expectations-summary');
    if (!list.length) {
      summary.textContent = page.state.set.length
        ? 'Not checked: a file\'s expect: lines are about the file as written, and the settings change it. Reset all to check them.'
        : 'This scenario states no expectations.';
      ul.replaceChildren();
      return;
    }
    const ok = list.filter((e) => e.ok && !e.skipped).length;
    const failed = list.filter((e) => !e.ok && !e.skipped).length;
    const skipped = list.filter((e) => e.skipped).length;
    summary.textContent = `${ok} of ${ok + failed} hold${failed ? `, ${failed} fail` : ''}${skipped ? `; ${skipped} ${skipped === 1 ? 'needs' : 'need'} other runs (ratelim check)` : ''}.`;
    ul.replaceChildren(...list.map((e) => {
      const kind = e.skipped ? 'skipped' : e.ok ? 'ok' : 'fail';
      const mark = e.skipped ? '–' : e.ok ? '✓' : '✗';
      const word = e.skipped ? 'needs other runs:' : e.ok ? 'holds:' : 'fails:';
      return el('li', { class: kind },
        el('span', { class: 'mark', 'aria-hidden': 'true', text: mark }),
        el('span', null, el('span', { class: 'visually-hidden', text: word + ' ' }), e.text || ''));
    }));
  }

  // ---------- the scrubber ----------

  function setupScrubber(durationS, stepS) {
    const sc = $('scrubber');
    const dur = Number.isFinite(durationS) && durationS > 0 ? durationS : 0;
    let step = Number.isFinite(stepS) && stepS > 0 ? stepS : 1;
    while (dur / step > 2000) step *= 2; // a slider of at most 2000 positions
    sc.max = String(dur);
    sc.step = String(step);
    sc.value = String(dur);
    sc.disabled = dur === 0;
    $('play').disabled = dur === 0;
    page.frameT = null;
    showFrameTime(dur);
    $('so-far').hidden = true;
  }

  function showFrameTime(t) {
    const dur = Number($('scrubber').max);
    const text = `t = ${fmtSeconds(t)}`;
    $('frame-time').textContent = text;
    $('scrubber').setAttribute('aria-valuetext', t >= dur ? `${text}, the whole run` : text);
  }

  // wantFrame asks for the run cut at t; frames are drawn once per animation
  // frame, the latest t winning, so at most one frame() is in flight.
  function wantFrame(t) {
    page.frameT = t;
    showFrameTime(t);
    if (page.frameRaf) return;
    page.frameRaf = requestAnimationFrame(drawFrame);
  }

  function drawFrame() {
    page.frameRaf = 0;
    const t = page.frameT;
    if (t === null || !page.last) return;
    const dur = Number($('scrubber').max);
    if (t >= dur) {
      if (page.framesShown) putSVG($('timeline'), page.last.timeline, 'The run over time: each client\'s requests allowed and rejected');
      page.framesShown = false;
      $('so-far').hidden = true;
      return;
    }
    const fv = call('frame', t);
    if (fv.error) {
      status(`the frame at ${fmtSeconds(t)} could not be drawn: ${fv.error.text}`);
      return;
    }
    putSVG($('timeline'), fv.timeline, `The run up to ${fmtSeconds(t)}`);
    page.framesShown = true;
    renderSoFar(fv.clients || [], t);
  }

  function renderSoFar(clients, t) {
    $('so-far-caption').textContent = `So far, at t = ${fmtSeconds(t)}`;
    const body = $('so-far-table').tBodies[0];
    body.replaceChildren(...clients.map((c) => el('tr', null,
      el('th', { scope: 'row', text: c.name }),
      el('td', { class: 'num', text: fmtNum(c.sent) }),
      el('td', { class: 'num', text: fmtNum(c.allowed) }),
      el('td', { class: c.rejected ? 'num' : 'num zero', text: fmtNum(c.rejected) }))));
    $('so-far').hidden = false;
  }

  function togglePlay() {
    if (page.playing) { stopPlaying(); return; }
    const sc = $('scrubber');
    const dur = Number(sc.max);
    if (!(dur > 0) || !page.last) return;
    let from = Number(sc.value);
    if (from >= dur) from = 0;
    page.playing = true;
    page.playFrom = from;
    page.playStart = performance.now();
    $('play').textContent = '❚❚ Pause';
    $('play').setAttribute('aria-pressed', 'true');
    page.playRaf = requestAnimationFrame(playTick);
  }

  function playTick(now) {
    if (!page.playing) return;
    page.playRaf = 0;
    const sc = $('scrubber');
    const dur = Number(sc.max);
    const step = Number(sc.step) || 1;
    const rate = dur / PLAY_SECONDS;
    let t = page.playFrom + ((now - page.playStart) / 1000) * rate;
    t = Math.min(dur, Math.floor(t / step) * step);
    if (Number(sc.value) !== t || page.frameT !== t) {
      sc.value = String(t);
      wantFrame(t);
    }
    if (t >= dur) { stopPlaying(); return; }
    page.playRaf = requestAnimationFrame(playTick);
  }

  function stopPlaying() {
    if (!page.playing) return;
    page.playing = false;
    if (page.playRaf) cancelAnimationFrame(page.playRaf);
    page.playRaf = 0;
    $('play').textContent = '▶ Play';
    $('play').setAttribute('aria-pressed', 'false');
  }

  // ---------- side by side ----------

  function renderVsSettings() {
    const sel = $('vs-setting');
    const keep = sel.value || (page.state.vs[0] && page.state.vs[0].name) || '';
    sel.replaceChildren();
    for (const c of page.controls) sel.append(el('option', { value: c.name, text: !c.label || c.label === c.name ? c.name : `${c.label} (${c.name})` }));
    if (keep && page.controls.some((c) => c.name === keep)) sel.value = keep;
    const on = page.controls.length > 0;
    $('vs-on').disabled = !on;
    syncVsChoices();
    if (!$('vs-on').checked) $('vs-value').value = suggestB(controlNamed(sel.value));
  }

  function syncVsChoices() {
    const c = controlNamed($('vs-setting').value);
    const list = $('vs-choices');
    list.replaceChildren(...((c && c.choices) || []).map((ch) => el('option', { value: ch })));
  }

  // suggestB is a value for B worth comparing: the next choice, or twice
  // the number.
  function suggestB(c) {
    if (!c) return '';
    const cur = settingOf(c.name) !== undefined ? settingOf(c.name) : c.value;
    if (c.kind === 'choice' && c.choices && c.choices.length > 1) {
      const i = c.choices.indexOf(cur);
      return c.choices[(i + 1) % c.choices.length];
    }
    if (c.kind === 'int' || c.kind === 'duration') {
      const p = sliderPosition(c, cur);
      if (Number.isFinite(p)) {
        let next = p > 0 ? p * 2 : (Number(c.step) || 1);
        if (Number.isFinite(Number(c.max)) && next > Number(c.max)) next = p / 2 >= Number(c.min) ? p / 2 : Number(c.max);
        return sliderValue(c, next);
      }
    }
    if (c.kind === 'rate') {
      const m = /^(\d+(?:\.\d+)?)(\/.*)$/.exec(String(cur).trim());
      if (m) return `${trimNumber(Number(m[1]) * 2, 3)}${m[2]}`;
    }
    return String(cur);
  }

  function syncVsState() {
    const on = $('vs-on').checked;
    // B's setting shows once side by side is on (its inputs stay in the page).
    $('vs-pick').hidden = !on;
    const name = $('vs-setting').value;
    const value = $('vs-value').value.trim();
    page.state.vs = on && name && value !== '' ? [{ name, value }] : [];
  }

  function onVsToggle() {
    if ($('vs-on').checked && $('vs-value').value.trim() === '') {
      $('vs-value').value = suggestB(controlNamed($('vs-setting').value));
    }
    syncVsState();
    changed({ keepGuess: true });
  }

  function onVsSetting() {
    syncVsChoices();
    $('vs-value').value = suggestB(controlNamed($('vs-setting').value));
    if ($('vs-on').checked) { syncVsState(); changed({ keepGuess: true }); }
  }

  function onVsValue() {
    if (!$('vs-on').checked) return;
    const before = JSON.stringify(page.state.vs);
    syncVsState();
    if (JSON.stringify(page.state.vs) !== before) changed({ keepGuess: true });
  }

  function renderVs(vs) {
    const box = $('vs');
    if (!vs || !page.state.vs.length) { box.hidden = true; $('vs-timeline').replaceChildren(); return; }
    box.hidden = false;
    $('vs-label-a').textContent = vs.labelA || 'A';
    $('vs-label-b').textContent = vs.labelB || 'B';
    putSVG($('vs-timeline'), vs.timeline, `Run A (${vs.labelA || ''}) beside run B (${vs.labelB || ''})`);
    $('vs-rows').textContent = vs.rows || '';
    $('vs-command').textContent = vs.command || '';
    $('vs-command').parentElement.hidden = !vs.command;
  }

  // syncModeInputs shows page.state's modes in their inputs (after a
  // permalink opened).
  function syncModeInputs() {
    $('predict-on').checked = page.state.predict;
    const v = page.state.vs[0];
    $('vs-on').checked = !!v;
    $('vs-pick').hidden = !v;
    if (v) {
      const sel = $('vs-setting');
      if (![...sel.options].some((o) => o.value === v.name)) sel.append(el('option', { value: v.name, text: v.name }));
      sel.value = v.name;
      $('vs-value').value = v.value;
    }
  }

  // ---------- predict, then see ----------

  function renderQuestion(resp) {
    const q = resp.question;
    const box = $('predict-on');
    if (!q) {
      // A file that did not read says nothing about its question.
      if (!resp.error) {
        const why = 'No question in this scenario (a file asks one with a question: block).';
        box.disabled = true;
        box.checked = false;
        box.title = why;
        $('predict-why').textContent = why;
        page.state.predict = false;
        page.revealed = false;
      }
      applyPredictView();
      return;
    }
    box.disabled = false;
    box.title = '';
    $('predict-why').textContent = '';
    $('question').textContent = q.ask || '';
    const pick = q.pick === 'most' || q.pick === 'least';
    const current = $('guess');
    const wantSelect = pick;
    const names = pick ? (q.choices && q.choices.length ? q.choices : (resp.scenario ? resp.scenario.clients : [])) : [];
    const sameKind = (current.tagName === 'SELECT') === wantSelect;
    const sameNames = !wantSelect || (sameKind && [...current.options].slice(1).map((o) => o.value).join('\n') === names.join('\n'));
    if (!sameKind || !sameNames) {
      const old = current.value;
      let g;
      if (wantSelect) {
        g = el('select', { id: 'guess' }, el('option', { value: '', text: '— pick a client —' }));
        for (const n of names) g.append(el('option', { value: n, text: n }));
      } else {
        g = el('input', { type: 'number', id: 'guess', inputmode: 'numeric', step: 'any' });
      }
      g.addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); reveal(); } });
      current.replaceWith(g);
      if (old && (!wantSelect || names.includes(old))) g.value = old;
    }
    applyPredictView();
  }

  function clearGuess() {
    const g = $('guess');
    g.value = '';
    $('answer').replaceChildren();
  }

  // applyPredictView hides what gives the answer away while predicting.
  function applyPredictView() {
    const predicting = page.state.predict;
    const hide = predicting && !page.revealed;
    $('predict').hidden = !predicting;
    $('results').hidden = hide;
    $('reveal').disabled = !page.last || page.revealed;
    $('ask-again').hidden = !page.revealed;
    $('predict-waiting').hidden = !hide;
    const panel = $('yaml-panel');
    if (hide && !panel.dataset.closedForPredict) {
      page.yamlOpenBeforePredict = panel.open;
      panel.open = false;
      panel.dataset.closedForPredict = '1';
      $('yaml-hidden-note').hidden = false;
    } else if (!hide && panel.dataset.closedForPredict) {
      delete panel.dataset.closedForPredict;
      panel.open = page.yamlOpenBeforePredict;
      $('yaml-hidden-note').hidden = true;
    }
  }

  function reveal() {
    const r = page.last;
    if (!r || !r.question || !r.question.answer) return;
    const q = r.question;
    const a = q.answer;
    const g = $('guess');
    const guess = g.value.trim();
    const parts = [];
    const said = guess === '' ? 'You did not guess' : `You said ${g.tagName === 'SELECT' ? guess : fmtNum(Number(guess))}`;
    parts.push(el('span', { text: said }), ' · ', el('span', { text: `the run: ${a.text}` }));
    if (guess !== '') {
      let right = false;
      let detail = '';
      if (g.tagName === 'SELECT') {
        right = Array.isArray(a.clients) && a.clients.includes(guess);
      } else {
        const d = Number(guess) - Number(a.value);
        right = Math.abs(d) < 1e-9;
        if (!right && Number.isFinite(d)) detail = ` (${d > 0 ? 'over' : 'under'} by ${fmtNum(Math.abs(d))})`;
      }
      // Within a tenth of the run's number is a good guess, and says so.
      const close = !right && g.tagName !== 'SELECT' && Math.abs(Number(guess) - Number(a.value)) <= 0.1 * Math.abs(Number(a.value));
      const verdict = right ? '✓ right' : close ? `≈ close${detail}` : `✗ not quite${detail}`;
      parts.push(' ', el('span', { class: right || close ? 'right' : 'wrong', text: verdict }));
    }
    $('answer').replaceChildren(...parts);
    page.revealed = true;
    applyPredictView();
  }

  function onPredictToggle() {
    page.state.predict = $('predict-on').checked;
    page.revealed = false;
    clearGuess();
    applyPredictView();
    updateHash();
    if (page.state.predict) $('guess').focus();
  }

  // ---------- copying ----------

  // copyText puts text on the clipboard; where the browser refuses (no
  // permission, an old browser), it selects the text for Ctrl+C instead:
  // in field, or else the element shown.
  function copyText(text, field, shown, done) {
    const fallback = () => {
      if (field) {
        const hidden = field.closest('[hidden]');
        if (hidden) hidden.hidden = false;
        field.value = text;
        field.focus();
        field.select();
      } else if (shown) {
        window.getSelection().selectAllChildren(shown);
      }
      status('It is selected: press Ctrl+C (⌘C on a Mac) to copy it.');
    };
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(() => status(done), fallback);
    } else {
      fallback();
    }
  }

  function copyLink() {
    if (page.lastResponse) updateHash();
    $('link-text').value = location.href;
    copyText(location.href, $('link-text'), null, 'Link copied: paste it into your slides or a message.');
  }

  // ---------- wiring ----------

  function wire() {
    $('builtin').addEventListener('change', () => {
      const name = $('builtin').value;
      if (!name) return;
      cancelYamlEdit();
      page.state = { builtin: name, yaml: '', file: '', set: [], vs: [], predict: page.state.predict };
      syncModeInputs();
      $('download-note').hidden = true;
      if (page.sources[name]) setYamlText(page.sources[name]);
      changed({ keepGuess: false });
    });
    const ta = $('yaml');
    ta.addEventListener('input', onYamlInput);
    ta.addEventListener('scroll', () => { $('gutter').scrollTop = ta.scrollTop; });
    $('load-file').addEventListener('change', onLoadFile);
    const editor = document.querySelector('.editor');
    editor.addEventListener('dragover', (e) => {
      if (e.dataTransfer && [...e.dataTransfer.types].includes('Files')) { e.preventDefault(); editor.classList.add('drop'); }
    });
    editor.addEventListener('dragleave', () => editor.classList.remove('drop'));
    editor.addEventListener('drop', (e) => {
      editor.classList.remove('drop');
      const f = e.dataTransfer && e.dataTransfer.files && e.dataTransfer.files[0];
      if (!f) return;
      e.preventDefault();
      loadFile(f);
    });
    $('download-yaml').addEventListener('click', downloadYaml);
    $('goto-error').addEventListener('click', () => gotoLine(Number($('goto-error').dataset.line)));
    $('reset-all').addEventListener('click', () => {
      if (!page.state.set.length) return;
      page.state.set = [];
      for (const c of page.controls) updateControl(c);
      $('reset-all').disabled = true;
      changed({ keepGuess: false });
    });
    $('copy-link').addEventListener('click', copyLink);
    document.querySelector('.skip').addEventListener('click', (e) => {
      // While predicting, the results are hidden: the question is where to go.
      e.preventDefault();
      const target = $('results').hidden ? $('guess') : $('results');
      target.focus();
      target.scrollIntoView({ block: 'start' });
    });
    $('copy-command').addEventListener('click', () => copyText($('command').textContent, null, $('command'), 'Command copied: paste it in a terminal.'));

    const sc = $('scrubber');
    sc.addEventListener('input', () => { stopPlaying(); wantFrame(Number(sc.value)); });
    sc.addEventListener('keydown', (e) => {
      if (e.key === ' ' || e.code === 'Space') { e.preventDefault(); togglePlay(); }
    });
    $('play').addEventListener('click', togglePlay);

    for (const btn of document.querySelectorAll('button.fullscreen')) {
      const target = $(btn.dataset.target);
      if (!target.requestFullscreen) { btn.hidden = true; continue; }
      btn.addEventListener('click', () => {
        if (document.fullscreenElement) document.exitFullscreen();
        else target.requestFullscreen().catch((e) => status(`full screen refused: ${e.message}`));
      });
    }
    document.addEventListener('fullscreenchange', () => {
      for (const btn of document.querySelectorAll('button.fullscreen')) {
        btn.textContent = document.fullscreenElement && document.fullscreenElement.id === btn.dataset.target ? 'Exit full screen' : 'Full screen';
      }
    });

    $('vs-on').addEventListener('change', onVsToggle);
    $('vs-setting').addEventListener('change', onVsSetting);
    $('vs-value').addEventListener('change', onVsValue);
    $('vs-value').addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); onVsValue(); } });

    $('predict-on').addEventListener('change', onPredictToggle);
    $('reveal').addEventListener('click', reveal);
    $('ask-again').addEventListener('click', () => {
      page.revealed = false;
      clearGuess();
      applyPredictView();
      $('guess').focus();
    });
    $('guess').addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); reveal(); } });

    window.addEventListener('hashchange', () => {
      const frag = location.hash.slice(1);
      if (!frag || '#' + frag === page.hash) return;
      if (openFragment(frag)) changed({ keepGuess: false });
    });
  }

  async function boot() {
    setBodyState('loading');
    wire();
    renderGutter(0);
    try {
      await loadSimulator();
    } catch (e) {
      fatal(e);
      return;
    }
    renderBuiltins();
    $('copy-link').disabled = false;
    const frag = location.hash.slice(1);
    if (!frag || !openFragment(frag)) {
      page.state = { builtin: page.builtins.some((b) => b.name === DEFAULT_BUILTIN) ? DEFAULT_BUILTIN : (page.builtins[0] ? page.builtins[0].name : DEFAULT_BUILTIN), yaml: '', file: '', set: [], vs: [], predict: false };
    }
    requestRun();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot);
  else boot();
})();
