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
  // The largest file the page loads: the simulator's bound on a scenario's
  // text. A link carries less (its state's JSON is bounded by the same
  // 1 MiB, and chat tools cut links past ~8 KB): Copy link says so, and
  // offers Download YAML instead.
  const MAX_FILE_BYTES = 1 << 20;
  const MAX_WASM_BYTES = 256 << 20;
  const PLAY_SECONDS = 12; // a whole run plays in about this long
  // Links longer than this are copied with a warning: chat tools, slide
  // software and some mail clients cut a URL past about 8 KB.
  const LINK_WARN_CHARS = 8 << 10;

  const $ = (id) => document.getElementById(id);
  const numbers = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });

  // page is everything the page remembers between events.
  const page = {
    state: newState({ builtin: DEFAULT_BUILTIN }),
    builtins: [],
    sources: Object.create(null), // a built-in's text, once a run has shown it
    last: null,                   // the last Response that ran (no error)
    lastResponse: null,           // the last Response, error or not
    controls: [],                 // the last Response's controls
    controlsKey: '',
    runs: 0,
    runScheduled: false,
    warmStopped: true,            // warmUp's runs stop (see warmUp)
    shownState: '',               // the state of the run shown, as JSON
    yamlTimer: 0,
    revealed: false,
    frameT: null,
    dur: 0,                       // the shown run's length (s); the scrubber's max may pass it
    frameRaf: 0,
    framesShown: false,
    playing: false,
    playStart: 0,
    playFrom: 0,
    playRaf: 0,
    hash: '',
    // keepHash is set while the page shows something other than what its
    // link asked for (a link that could not be read): the link stays in the
    // address bar, as evidence, until the user changes something.
    keepHash: false,
    linkError: '',                // why the last encode failed ('' when it did not)
    yamlOpenBeforePredict: true,
    yamlAnyway: false,            // shown on purpose while predicting
    runFromEditor: false,         // the next run follows typing: announce it
  };

  // ---------- small helpers ----------

  function setBodyState(s) { document.body.dataset.state = s; }
  function status(text) { $('status').textContent = inputText(text); }
  // say is status, also announced to a screen reader: for what someone
  // must hear (an error, a run they started by typing, a copy), not for
  // every slider step.
  function say(text) {
    status(text);
    const a = $('announce');
    a.textContent = '';
    // A new node each time: the same text twice is announced twice.
    a.append(document.createTextNode(inputText(text)));
  }

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

  // inputText is text from input (a name, a summary, a question) as the
  // page may show it: the characters that would reorder or hide the text
  // around them (bidi controls: U+061C, U+200E/F, U+202A–E, U+2066–9) and
  // control characters (but newline and tab) are written out visibly,
  // "\u202e", "\x07", as the Go side (internal/escape) writes them in the
  // pictures, so the page and its picture agree.
  const UNSAFE_IN_TEXT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
  function inputText(s) {
    return String(s === undefined || s === null ? '' : s).replace(UNSAFE_IN_TEXT, (c) => {
      const n = c.charCodeAt(0);
      return n < 0x80 ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u${n.toString(16).padStart(4, '0')}`;
    });
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
    // A damaged file says so in words a teacher can act on, not as the
    // browser's "Failed to execute 'atob'".
    const damaged = (e) => new Error(`ratelim-wasm.js is damaged (${e && e.message ? e.message : e}): export the site again with ratelim web --export DIR`);
    let gz;
    try {
      gz = base64Bytes(b64);
    } catch (e) {
      throw damaged(e);
    }
    let wasm;
    try {
      wasm = await gunzip(gz, (share) => loadingProgress(`loading the simulator… ${Math.round(share * 100)}%`, share));
    } catch (e) {
      throw damaged(e);
    }
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

  // fatal shows why the simulator did not start, large, where the run
  // would be, and turns off what cannot work without it.
  function fatal(err) {
    const text = `The playground could not start: ${err && err.message ? err.message : err}`;
    $('loading-text').textContent = inputText(text);
    $('load-progress').hidden = true;
    say(text);
    document.body.classList.add('start-failed');
    setBodyState('error');
    $('yaml').readOnly = true;
    for (const id of ['load-file', 'download-yaml', 'copy-link', 'builtin', 'reset-all', 'predict-on', 'vs-on']) $(id).disabled = true;
    $('yaml-error').textContent = text;
    $('yaml-error-box').hidden = false;
    $('goto-error').hidden = true;
  }

  // ---------- state, permalink ----------

  // newState is a fresh state: nothing set, no run B, fields as given
  // (builtin, yaml, file, predict).
  function newState(fields) {
    return Object.assign({ builtin: '', yaml: '', file: '', set: [], vs: [], predict: false }, fields);
  }

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
    if (page.keepHash) return true;
    const enc = call('encode', JSON.stringify(stateForRun()));
    if (enc.error) {
      status(`the link cannot carry this scenario: ${enc.error.text}`);
      page.linkError = enc.error.text;
      // The address bar must not keep an older scenario's link as if it
      // were this one's.
      if (location.hash) {
        page.hash = '';
        try { history.replaceState(history.state, '', location.pathname + location.search); } catch (e) { /* file:// may refuse */ }
      }
      return false;
    }
    page.linkError = '';
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

  // openFragment reads a permalink's state; false (and a notice at the top
  // of the page) when it cannot, or when it names a built-in this page does
  // not have. Then the page shows the default built-in and leaves the link
  // in the address bar until the user changes something.
  function openFragment(fragment) {
    const dec = call('decode', fragment);
    if (dec.error || !dec.state) {
      linkFailed(`This link could not be read (${dec.error ? dec.error.text : 'no state'})`);
      return false;
    }
    const s = dec.state;
    if (s.builtin && page.builtins.length && !page.builtins.some((b) => b.name === s.builtin)) {
      linkFailed(`This link names the built-in scenario "${s.builtin}", which this page does not have (a newer page, or a typo)`);
      return false;
    }
    cancelYamlEdit();
    const settings = (list) => (Array.isArray(list) ? list.map((x) => ({ name: String(x.name), value: String(x.value) })) : []);
    page.state = newState({
      builtin: s.builtin || '',
      yaml: s.builtin ? '' : (s.yaml || ''),
      file: s.file || '',
      set: settings(s.set),
      vs: settings(s.vs),
      predict: !!s.predict,
    });
    if (!page.state.builtin && !page.state.yaml) page.state.builtin = DEFAULT_BUILTIN;
    page.revealed = false;
    page.hash = '#' + fragment;
    if (!page.state.builtin) setYamlText(page.state.yaml);
    syncModeInputs();
    return true;
  }

  function linkFailed(why) {
    page.keepHash = true;
    pageNotice(`${why}: showing ${defaultBuiltin()} instead. The link is left in the address bar as it came.`);
  }

  function defaultBuiltin() {
    if (page.builtins.some((b) => b.name === DEFAULT_BUILTIN) || !page.builtins.length) return DEFAULT_BUILTIN;
    return page.builtins[0].name;
  }

  // pageNotice shows text at the top of the page until it is dismissed;
  // action, when given, is {label, run}: a button beside it.
  function pageNotice(text, action) {
    $('page-notice-text').textContent = inputText(text);
    const btn = $('page-notice-action');
    btn.hidden = !action;
    btn.textContent = action ? action.label : '';
    btn.onclick = action ? () => action.run() : null;
    $('page-notice').hidden = false;
  }

  // showNotice is a note about the YAML (a file too large, unreadable),
  // beside the editor it is about.
  function showNotice(text) {
    const note = $('download-note');
    status(text);
    note.textContent = text;
    note.hidden = false;
  }

  // ---------- running ----------

  // requestRun marks the state changed; one run, of the latest state, follows
  // once the page has painted "running".
  //
  // A run is on the main thread (a Worker cannot load the simulator from
  // file://: no fetch and no importScripts there), so it blocks the page
  // while it computes: "running…" is painted first (the run waits for the
  // next frame, then for a task after it), so a large run does not look
  // like a frozen page.
  function requestRun() {
    page.warmStopped = true;
    setBodyState('running');
    status('running… (large runs take seconds)');
    if (page.runScheduled) return;
    page.runScheduled = true;
    requestAnimationFrame(() => setTimeout(runNow, 0));
    setTimeout(runNow, 100); // in a hidden tab requestAnimationFrame waits
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
      page.runFromEditor = false;
    } catch (e) {
      resp.error = resp.error || { text: `internal error: the page could not show the run: ${e.message}` };
      showError(resp.error);
    }
    updateHash();
    window.ratelimLast = resp;
    page.shownState = JSON.stringify(state);
    if (page.runs === 1 && !resp.error) warmUp(page.shownState, resp);
    document.body.dataset.runs = String(page.runs);
    setBodyState(resp.error ? 'error' : 'ready');
    // A change made while the page was busy has its own run queued already.
    if (page.runScheduled) setBodyState('running');
  }

  // warmUp runs the page's first scenario again, a few times, while the
  // page sits idle after it opens, the results thrown away. The browser
  // compiles the simulator's hot code to its fastest only once it has run
  // a dozen times or so, and until then a slider's re-run takes about
  // twice as long: measured in a fresh headless Chromium here,
  // cluster-partition's first moves took 259, 196, 186 ms, and after 20
  // such runs 114, 143, 124 (its steady state ~90). Waiting idle does not
  // do it; running does. It runs only when the page is idle, and stops at
  // anything the user does (a key, the pointer, a change, a hidden tab):
  // at most one run of its own (at most WARM_SLOW_MS, or it stops) stands
  // between them and theirs. It spends at most WARM_BUDGET_MS, and runs the
  // state the page shows: the simulator's last run, which the scrubber's
  // frames cut, is that run again (same seed, same run).
  const WARM_RUNS = 20;
  const WARM_BUDGET_MS = 3000;
  const WARM_MAX_REQUESTS = 400000; // the largest built-in sends 160,102
  const WARM_SLOW_MS = 500;
  function warmUp(state, resp) {
    // A large scenario's runs would cost seconds each: by its size, not
    // its first run's time, which a cold or loaded machine doubles.
    const clients = resp.result && Array.isArray(resp.result.clients) ? resp.result.clients : [];
    const sent = clients.reduce((n, c) => n + (Number(c.sent) || 0), 0);
    if (!(sent <= WARM_MAX_REQUESTS)) return;
    page.warmStopped = false;
    let left = WARM_RUNS;
    let spent = 0;
    const stop = () => { page.warmStopped = true; };
    for (const type of ['pointerdown', 'keydown', 'wheel', 'touchstart']) window.addEventListener(type, stop, { once: true, capture: true, passive: true });
    const idle = window.requestIdleCallback || ((f) => setTimeout(() => f({ timeRemaining: () => 50 }), 50));
    const step = () => {
      if (page.warmStopped || document.hidden || left <= 0 || spent > WARM_BUDGET_MS || JSON.stringify(stateForRun()) !== state) return;
      const t0 = performance.now();
      try {
        globalThis.ratelim.run(state);
      } catch (e) {
        return;
      }
      const took = performance.now() - t0;
      spent += took;
      left -= 1;
      document.body.dataset.warmRuns = String(WARM_RUNS - left);
      // A machine this slow would keep a click waiting too long behind
      // the next one.
      if (took > WARM_SLOW_MS) return;
      idle(step);
    };
    idle(step);
  }

  function render(resp, ms) {
    page.lastResponse = resp;
    if (resp.scenario) renderScenario(resp.scenario);
    if (Array.isArray(resp.controls)) renderControls(resp.controls);
    renderQuestion(resp);
    if (resp.error) {
      showError(resp.error);
      // The last run that worked stays, dimmed, with the error above it
      // (the editor's error box may be screens away); its scrubber, Play
      // and full screen are off: the simulator keeps no run to draw.
      const stale = $('stale-note');
      $('stale-text').textContent = page.last ? 'This is the last run that worked: the scenario as it is now has an error, so nothing ran:' : '';
      $('stale-error').textContent = inputText(resp.error.text || 'error');
      const line = Number(resp.error.line) || 0;
      $('stale-goto').hidden = !line;
      $('stale-goto').textContent = line ? `Go to line ${line}` : '';
      $('stale-goto').dataset.line = String(line);
      stale.hidden = !page.last;
      $('results').classList.toggle('stale', true);
      stopPlaying();
      setRunControls(false);
      fitPicture(); // the note above the picture came
      say(`nothing ran: the scenario has an error: ${resp.error.text || 'error'}`);
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
    document.title = name ? `${inputText(name)} · ratelim playground` : 'ratelim playground';
    const ran = `${name ? name + ' · ' : ''}ran in ${Math.round(ms)} ms`;
    if (page.runFromEditor) say(ran); else status(ran);
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
    custom.textContent = page.state.builtin ? '— your own YAML —' : `— your own: ${inputText(page.state.file || sc.name || 'scenario.yaml')} —`;
    const info = page.builtins.find((b) => b.name === page.state.builtin);
    $('builtin-summary').textContent = inputText(info ? info.summary : (sc.summary || ''));
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

  // renderGutter numbers the editor's lines, bad (when given) marked. It
  // draws only the lines in view (a file may have tens of thousands, and a
  // span per line made every keystroke in a long file cost a third of a
  // second), shifted to follow the textarea's scroll.
  function renderGutter(badLine) {
    const ta = $('yaml');
    const g = $('gutter');
    const text = ta.value;
    let n = 1;
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
    const bad = badLine === undefined ? Number(g.dataset.bad || 0) : badLine;
    g.dataset.bad = String(bad || 0);
    g.dataset.lines = String(n);
    // The textarea's real line pitch (its lines may not be the CSS line
    // height to the pixel, and a drift adds up over thousands of lines).
    const cs = getComputedStyle(ta);
    const pad = parseFloat(cs.paddingTop) + parseFloat(cs.paddingBottom);
    const css = parseFloat(cs.lineHeight) || 24;
    const measured = (ta.scrollHeight - pad) / n;
    const lh = ta.scrollHeight > ta.clientHeight && measured > css * 0.9 && measured < css * 1.1 ? measured : css;
    const first = Math.max(1, Math.floor(ta.scrollTop / lh) + 1);
    const last = Math.min(n, first + Math.ceil((ta.clientHeight || 600) / lh) + 1);
    const inner = document.createElement('div');
    inner.style.transform = `translateY(${(first - 1) * lh - ta.scrollTop}px)`;
    for (let i = first; i <= last; i++) {
      const span = document.createElement('span');
      span.textContent = String(i);
      span.style.height = `${lh}px`;
      if (i === bad) span.className = 'bad';
      inner.append(span);
    }
    g.style.minWidth = `${String(n).length + 2.2}ch`;
    g.replaceChildren(inner);
  }

  function showError(err) {
    $('yaml-error').textContent = inputText(err.text || 'error');
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
      msg.textContent = hit ? `✗ ${inputText(err.text)}` : '';
      msg.hidden = !hit;
    }
    // Run B's error goes under B's value, where it was typed.
    if (ofVs) $('vs-value').setAttribute('aria-invalid', 'true');
    else $('vs-value').removeAttribute('aria-invalid');
    $('vs-error').textContent = ofVs ? `✗ ${inputText(err.text)}` : '';
    $('vs-error').hidden = !ofVs;
    if (ofVs) $('vs-value').setAttribute('aria-describedby', 'vs-error');
    else $('vs-value').removeAttribute('aria-describedby');
  }

  function clearError() {
    $('yaml-error').textContent = '';
    $('yaml-error-box').hidden = true;
    renderGutter(0);
    for (const node of document.querySelectorAll('#controls [aria-invalid], #vs-value')) node.removeAttribute('aria-invalid');
    for (const msg of document.querySelectorAll('#controls .control-error, #vs-error')) { msg.textContent = ''; msg.hidden = true; }
    $('vs-value').removeAttribute('aria-describedby');
  }

  // scrollGutterTo brings line into the editor's view without moving the
  // caret of someone typing.
  function scrollGutterTo(line) {
    const ta = $('yaml');
    const lh = ta.scrollHeight / Math.max(1, ta.value.split('\n').length);
    const top = (line - 1) * lh;
    if (top < ta.scrollTop || top > ta.scrollTop + ta.clientHeight - lh) {
      ta.scrollTop = Math.max(0, top - ta.clientHeight / 3);
      renderGutter();
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
    renderGutter();
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
      page.runFromEditor = true; // its result is announced: the typist cannot see it
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
      page.state = newState({ yaml: text, file: f.name, predict: page.state.predict });
      syncModeInputs();
      setYamlText(text);
      $('download-note').hidden = true;
      changed({ keepGuess: false });
    }, (e) => showNotice(`${f.name} could not be read: ${e.message}`));
  }

  // makeOwn follows "— your own YAML —" in the picker: the text in the
  // editor (a built-in's, with its settings kept) becomes the user's file,
  // runs as such, and the editor is where to change it.
  function makeOwn() {
    if (!page.state.builtin) return;
    cancelYamlEdit();
    const file = `${page.state.builtin}.yaml`;
    page.state = newState({ yaml: $('yaml').value, file, set: page.state.set, vs: page.state.vs, predict: page.state.predict });
    changed({ keepGuess: true });
    if (!yamlHidden()) {
      $('yaml-panel').open = true;
      $('yaml').focus();
    }
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
    } else if (r && r.scenario) {
      // Written on the click, not on every run: the file with the shown
      // run's settings written into its YAML (ratelim.written), not those
      // of a change still waiting for its run.
      const w = call('written', page.shownState || JSON.stringify(stateForRun()));
      if (w.error || typeof w.yaml !== 'string') {
        note.replaceChildren(
          el('span', { text: `This run cannot be written as one YAML file: ${inputText(w.error ? w.error.text : 'no text')}. Run it from a terminal instead: ` }),
          el('code', { text: r.command || '' }),
        );
        note.hidden = false;
        return;
      }
      text = w.yaml;
    } else {
      return;
    }
    saveFile(name, text, 'text/yaml');
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
    const label = el('label', { for: id }, el('span', null, el('bdi', { text: inputText(c.label || c.name) })));
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
      // The list is narrowed to what runs as it opens: mousedown comes
      // before the browser draws it, focus before a key moves it.
      input.addEventListener('mousedown', () => offerRunnable(input, c.name));
      input.addEventListener('focus', () => offerRunnable(input, c.name));
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
    if (c.help) row.append(el('p', { class: 'help', id: helpId, text: inputText(c.help) }));
    row.append(el('p', { class: 'control-error', hidden: true }));
    return row;
  }

  // runnableChoices are a choice control's values that run A takes with
  // the page's settings, or, forB, that run B takes (B is A's file with
  // this one setting applied after A's, which takes some values A's
  // settings refuse: ratelim.choices). A run lists every
  // value its field takes, because finding which run costs a trial run a
  // value, too dear for every step of a slider's drag; so they are asked
  // for when a list opens, once for each state of the page. The full list
  // when the simulator cannot say (a run then says what is wrong).
  const runnable = { key: '', list: null };
  function runnableChoices(c, forB) {
    const all = (c && c.choices) || [];
    if (!c || c.kind !== 'choice') return all;
    const state = stateForRun();
    delete state.vs;
    const text = JSON.stringify(state);
    const key = `${forB ? 'B' : 'A'} ${c.name}\n${text}`;
    if (runnable.key !== key) {
      const resp = call('choices', text, c.name, !!forB);
      if (resp.error || !Array.isArray(resp.choices)) return all;
      runnable.key = key;
      runnable.list = resp.choices;
    }
    return runnable.list;
  }

  // offerRunnable narrows a choice control's list to runnableChoices as
  // it opens.
  function offerRunnable(input, name) {
    const c = controlNamed(name);
    if (!c) return;
    const list = runnableChoices(c);
    const shown = [...input.options].filter((o) => !o.dataset.extra).map((o) => o.value);
    if (shown.length === list.length && shown.every((v, i) => v === list[i])) return;
    input.replaceChildren(...list.map((ch) => el('option', { value: ch, text: ch })));
    updateControl(c);
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
      // A value the choices lack (the file's own) gets an option of its
      // own, and loses it once the value is another.
      for (const o of [...input.options]) if (o.dataset.extra && o.value !== value) o.remove();
      if (![...input.options].some((o) => o.value === value)) input.append(el('option', { value, text: inputText(value), dataset: { extra: '1' } }));
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
    page.keepHash = false; // the user changed something: the link follows
    if (page.state.predict && !(opts && opts.keepGuess)) askAgain();
    requestRun();
  }

  // ---------- results ----------

  // putSVG shows an SVG of ours in box, scaled to its width. It is parsed
  // in a template, whose content is inert (nothing in it loads or runs),
  // cleaned, and then moved into the page, not copied: a DOMParser's
  // document had to be imported, node by node, a second time (a tenth of a
  // re-run's time in the page for a large timeline). The template parses
  // as HTML does, so the cleaning keeps SVG's drawing elements alone:
  // anything outside SVG's namespace (HTML inside a <desc> or <title>),
  // scripts, styles, animations, foreign objects, handlers and links out
  // are dropped. The SVG is ours and its text escaped; this is the second
  // line, behind the page's CSP.
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const SVG_DROPPED = new Set(['script', 'style', 'foreignObject', 'set', 'animate', 'animateMotion', 'animateTransform', 'iframe', 'image', 'a']);
  function putSVG(box, text, label) {
    if (!text) { box.replaceChildren(); return; }
    const tpl = document.createElement('template');
    tpl.innerHTML = text;
    const svg = tpl.content.querySelector('svg');
    for (const node of [...tpl.content.querySelectorAll('*')]) {
      if (node.namespaceURI !== SVG_NS || SVG_DROPPED.has(node.localName)) node.remove();
    }
    if (!svg || svg.namespaceURI !== SVG_NS || svg.parentNode !== tpl.content) {
      box.replaceChildren(el('p', { class: 'help', text: 'The picture could not be drawn.' }));
      return;
    }
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
    box.replaceChildren(svg);
  }

  function renderResults(resp) {
    renderHeadline(resp.headline || '');
    const dur = Number(resp.durationS || (resp.scenario && resp.scenario.durationS) || 0);
    putSVG($('timeline'), resp.timeline, 'The run over time: each client\'s requests allowed and rejected');
    page.framesShown = false;
    setupScrubber(dur, resp.scenario ? Number(resp.scenario.stepS) : 0);
    renderClients(resp.result);
    renderFindings(resp.findings);
    renderExpectations(resp.expectations);
    $('command').textContent = resp.command || '';
    // What the run changed to fit the tab (a coarser step), when it did.
    const notice = typeof resp.notice === 'string' ? resp.notice : '';
    $('run-notice').textContent = notice ? `Note: ${inputText(notice)}.`.replace(/\.\.$/, '.') : '';
    $('run-notice').hidden = !notice;
    $('download-json').hidden = typeof resp.resultJSON !== 'string' || resp.resultJSON === '';
  }

  // downloadJSON saves the run's JSON: the exact bytes `ratelim sim
  // --format json` writes for the command shown, named after the
  // command's scenario (runaway-healthcheck.json, scenario.json).
  function downloadJSON() {
    const r = page.last;
    if (!r || typeof r.resultJSON !== 'string' || r.resultJSON === '') return;
    const name = `${scenarioWord(r.command) || 'scenario'}.json`;
    saveFile(name, r.resultJSON, 'application/json');
  }

  // scenarioWord is the scenario a command runs, without a .yaml: the word
  // after "ratelim sim" ("runaway-healthcheck", "scenario").
  function scenarioWord(command) {
    const m = /^ratelim\s+sim\s+('([^']*)'|"([^"]*)"|(\S+))/.exec(String(command || ''));
    if (!m) return '';
    const word = m[2] !== undefined ? m[2] : m[3] !== undefined ? m[3] : m[4];
    const base = word.split('/').pop().replace(/\.ya?ml$/i, '');
    // A file name is the user's: only what a download's name may hold.
    return base.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^\.+/, '').slice(0, 100);
  }

  function saveFile(name, text, type) {
    const url = URL.createObjectURL(new Blob([text], { type }));
    const a = el('a', { href: url, download: name });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
    say(`downloaded ${name}`);
  }

  // renderHeadline shows the run's headline, two lines at most (CSS): one
  // that is cut opens whole on a click or Enter.
  function renderHeadline(text) {
    const h = $('headline');
    h.textContent = inputText(text);
    h.classList.remove('is-open');
    const long = h.scrollHeight > h.clientHeight + 1;
    h.classList.toggle('is-long', long);
    if (long) {
      h.tabIndex = 0;
      h.setAttribute('aria-expanded', 'false');
      h.title = 'Show the whole headline';
    } else {
      h.removeAttribute('tabindex');
      h.removeAttribute('aria-expanded');
      h.removeAttribute('title');
    }
  }
  function toggleHeadline() {
    const h = $('headline');
    if (!h.classList.contains('is-long')) return;
    const open = h.classList.toggle('is-open');
    h.setAttribute('aria-expanded', String(open));
    fitPicture();
  }

  // fitPicture tells the CSS how much of the screen is taken above the
  // picture and below it (the scrubber), so that with "Fit to screen" the
  // picture and its time axis fit on the screen under them. Above is measured from the page's
  // top (the bar, a notice, the headline, run B); after a reveal, from the
  // results' top, where Reveal scrolls to (the answer box above them would
  // leave the picture too small to read).
  function fitPicture() {
    const box = $('timeline');
    if (!box.isConnected || $('results').hidden) return;
    const root = document.documentElement.style;
    const from = page.state.predict && page.revealed ? $('results').getBoundingClientRect().top : -window.scrollY;
    const top = box.getBoundingClientRect().top - from;
    const scrub = document.querySelector('.scrub');
    // Written only when they change: a write, even of the same value,
    // would make the browser lay the page out again after this
    // measurement, on every run.
    const above = `${Math.round(top)}px`;
    const below = `${Math.round(scrub.offsetHeight + 16)}px`;
    if (root.getPropertyValue('--above') !== above) root.setProperty('--above', above);
    if (root.getPropertyValue('--below') !== below) root.setProperty('--below', below);
    const svg = box.querySelector('svg');
    $('actual-size').hidden = !svg;
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
      const tr = el('tr', null, el('th', { scope: 'row', dir: 'auto', text: inputText(c.name) }));
      if (showKey) tr.append(el('td', { dir: 'auto', text: inputText(c.key || '') }));
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
    ul.replaceChildren(...list.map((f) => el('li', null, el('span', { class: 'kind', text: inputText(f.kind || 'finding') }), inputText(f.text || ''))));
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
        el('span', null, el('span', { class: 'visually-hidden', text: word + ' ' }), inputText(e.text || '')));
    }));
  }

  // ---------- the scrubber ----------

  function setupScrubber(durationS, stepS) {
    const sc = $('scrubber');
    const dur = Number.isFinite(durationS) && durationS > 0 ? durationS : 0;
    let step = Number.isFinite(stepS) && stepS > 0 ? stepS : 1;
    while (dur / step > 2000) step *= 2; // a slider of at most 2000 positions
    // A range input snaps to min + k·step: its max is the first position at
    // or past the run's end (which a frame at it is cut to), so that the end
    // and "the whole run" are always reachable.
    page.dur = dur;
    sc.step = String(step);
    sc.max = String(Math.ceil(dur / step - 1e-9) * step);
    sc.value = sc.max;
    setRunControls(true);
    page.frameT = null;
    showFrameTime(dur);
    $('so-far').hidden = true;
  }

  // setRunControls turns the scrubber, Play and the full-screen buttons on
  // (a run to show) or off (the results are stale).
  function setRunControls(on) {
    const dur = page.dur;
    $('scrubber').disabled = !on || !(dur > 0);
    $('play').disabled = !on || !(dur > 0);
    for (const btn of document.querySelectorAll('button.fullscreen')) btn.disabled = !on;
  }

  function showFrameTime(t) {
    const dur = page.dur;
    const text = `t = ${fmtSeconds(t)}`;
    $('frame-time').textContent = text;
    $('scrubber').setAttribute('aria-valuetext', t >= dur ? `${text}, the whole run` : text);
  }

  // wantFrame asks for the run cut at t; frames are drawn once per animation
  // frame, the latest t winning, so at most one frame() is in flight.
  function wantFrame(t) {
    t = Math.min(t, page.dur);
    page.frameT = t;
    showFrameTime(t);
    if (page.frameRaf) return;
    page.frameRaf = requestAnimationFrame(drawFrame);
  }

  function drawFrame() {
    page.frameRaf = 0;
    const t = page.frameT;
    if (t === null || !page.last) return;
    const dur = page.dur;
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
      el('th', { scope: 'row', dir: 'auto', text: inputText(c.name) }),
      el('td', { class: 'num', text: fmtNum(c.sent) }),
      el('td', { class: 'num', text: fmtNum(c.allowed) }),
      el('td', { class: c.rejected ? 'num' : 'num zero', text: fmtNum(c.rejected) }))));
    $('so-far').hidden = false;
  }

  function togglePlay() {
    if (page.playing) { stopPlaying(); return; }
    const sc = $('scrubber');
    const dur = page.dur;
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
    const dur = page.dur;
    const step = Number(sc.step) || 1;
    const rate = dur / PLAY_SECONDS;
    let t = page.playFrom + ((now - page.playStart) / 1000) * rate;
    t = t >= dur ? dur : Math.floor(t / step) * step; // the end, even off the step
    if (page.frameT !== t) {
      sc.value = t >= dur ? sc.max : String(t);
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
    // The time is announced once, where playback stopped (#frame-time is
    // quiet, or it would count the seconds aloud while playing).
    say(`stopped at ${$('frame-time').textContent}`);
  }

  // ---------- side by side ----------

  function renderVsSettings() {
    const sel = $('vs-setting');
    const keep = sel.value || (page.state.vs[0] && page.state.vs[0].name) || '';
    sel.replaceChildren();
    for (const c of page.controls) sel.append(el('option', { value: c.name, text: inputText(!c.label || c.label === c.name ? c.name : `${c.label} (${c.name})`) }));
    if (keep && page.controls.some((c) => c.name === keep)) sel.value = keep;
    const on = page.controls.length > 0;
    $('vs-on').disabled = !on;
    syncVsChoices();
    // B's value is suggested when side by side is turned on, from the
    // values B takes (asking costs a trial run a value: not on every
    // file's first run).
    if (!$('vs-on').checked) $('vs-value').value = '';
  }

  // syncVsChoices offers B's values: a choice's, those run B takes, asked
  // when the user picks the setting or comes to B's value (narrow), else
  // the field's every value.
  function syncVsChoices(narrow) {
    const c = controlNamed($('vs-setting').value);
    const values = narrow ? runnableChoices(c, true) : (c && c.choices) || [];
    $('vs-choices').replaceChildren(...values.map((ch) => el('option', { value: ch })));
  }

  // valueOf is c's value in run A: its setting's, or the run's.
  function valueOf(c) {
    return settingOf(c.name) !== undefined ? settingOf(c.name) : c.value;
  }

  // suggestB is a value for B worth comparing: the next choice (of those
  // that run, when narrow), or twice the number.
  function suggestB(c, narrow) {
    if (!c) return '';
    const cur = valueOf(c);
    const choices = narrow ? runnableChoices(c, true) : c.choices;
    if (c.kind === 'choice' && choices && choices.length > 1) {
      const i = choices.indexOf(cur);
      return choices[(i + 1) % choices.length];
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
      let c = controlNamed($('vs-setting').value);
      // A setting with nothing else to take (slow-endpoint's algorithm:
      // only concurrency uses its limit) would put the run beside itself:
      // B moves to the first slider instead, at twice its value.
      if (c && suggestB(c, true) === valueOf(c)) {
        const slider = page.controls.find((x) => (x.kind === 'int' || x.kind === 'duration') && suggestB(x) !== valueOf(x));
        if (slider) {
          $('vs-setting').value = slider.name;
          syncVsChoices();
          c = slider;
        }
      }
      $('vs-value').value = suggestB(c, true);
    }
    syncVsState();
    changed({ keepGuess: true });
  }

  function onVsSetting() {
    syncVsChoices(true);
    $('vs-value').value = suggestB(controlNamed($('vs-setting').value), true);
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
    $('vs-label-a').textContent = inputText(vs.labelA || 'A');
    $('vs-label-b').textContent = inputText(vs.labelB || 'B');
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
    // Nothing ran: the error is the one thing to show, in the box that is on
    // screen while predicting (the YAML panel is shut then).
    $('predict-error').hidden = !resp.error;
    $('predict-error-text').textContent = resp.error
      ? `Nothing ran, so there is nothing to reveal: ${inputText(resp.error.text || 'error')}`
      : '';
    if (!q) {
      // A file that did not read says nothing about its question.
      if (resp.error) {
        // A predict box can always be turned off, question or not.
        if (box.checked) box.disabled = false;
      } else {
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
    $('question').textContent = inputText(q.ask || '');
    const pick = q.pick === 'most' || q.pick === 'least';
    const current = $('guess');
    const wantSelect = pick;
    const names = pick ? (q.choices && q.choices.length ? q.choices : (resp.scenario ? resp.scenario.clients : [])) : [];
    const sameKind = (current.tagName === 'SELECT') === wantSelect;
    const sameNames = !wantSelect || (sameKind && [...current.options].slice(1, -1).map((o) => o.value).join('\n') === names.join('\n'));
    if (!sameKind || !sameNames) {
      const old = current.value;
      let g;
      if (wantSelect) {
        g = el('select', { id: 'guess' }, el('option', { value: '', text: '— pick a client —' }));
        for (const n of names) g.append(el('option', { value: n, dir: 'auto', text: inputText(n) }));
        // Every client may come out alike (the answer's allTied): a guess too.
        // It is told apart by its data-all-alike, not its value (a client may have any name).
        g.append(el('option', { value: 'all alike', text: '— none: they all come out alike —', dataset: { allAlike: '1' } }));
      } else {
        g = el('input', { type: 'number', id: 'guess', inputmode: 'numeric', step: 'any' });
      }
      current.replaceWith(g);
      if (old && (!wantSelect || names.includes(old))) g.value = old;
    }
    applyPredictView();
  }

  // askAgain starts the prediction over: the guess and answer cleared, the
  // results hidden again.
  function askAgain() {
    page.revealed = false;
    clearGuess();
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
    const failed = !!(page.lastResponse && page.lastResponse.error);
    $('reveal').disabled = !page.last || page.revealed || failed;
    $('ask-again').hidden = !page.revealed;
    $('predict-waiting').hidden = !hide || failed;
    const panel = $('yaml-panel');
    const hideYaml = yamlHidden();
    if (hideYaml && !panel.dataset.closedForPredict) {
      page.yamlOpenBeforePredict = panel.open;
      panel.open = false;
      panel.dataset.closedForPredict = '1';
    } else if (!hideYaml && panel.dataset.closedForPredict) {
      delete panel.dataset.closedForPredict;
      panel.open = page.yamlAnyway || page.yamlOpenBeforePredict;
    }
    // The panel's note is outside its body: it shows while the panel is shut.
    $('yaml-hidden-note').hidden = !hideYaml;
    panel.querySelector('summary').setAttribute('aria-disabled', hideYaml ? 'true' : 'false');
    fitPicture(); // the predict box above the picture came or went
  }

  // yamlHidden reports whether the YAML panel is kept shut: while a
  // prediction is open and nobody asked to see the file anyway.
  function yamlHidden() {
    return page.state.predict && !page.revealed && !page.yamlAnyway;
  }

  function reveal() {
    const r = page.last;
    // The last run that worked is not the scenario as it is now.
    if (page.lastResponse && page.lastResponse.error) return;
    if (!r || !r.question || !r.question.answer) return;
    const q = r.question;
    const a = q.answer;
    const g = $('guess');
    const guess = g.value.trim();
    const allAlike = g.tagName === 'SELECT' && !!(g.selectedOptions[0] && g.selectedOptions[0].dataset.allAlike);
    const parts = [];
    const said = guess === '' ? 'You did not guess'
      : allAlike ? 'You said they all come out alike'
      : `You said ${g.tagName === 'SELECT' ? guess : fmtNum(Number(guess))}`;
    parts.push(el('span', { dir: 'auto', text: inputText(said) }), ' · ', el('span', { dir: 'auto', text: `the run: ${inputText(a.text)}` }));
    if (guess !== '') {
      let right = false;
      let detail = '';
      if (g.tagName === 'SELECT') {
        // allTied: every client ties, so no one client is the answer.
        if (a.allTied) {
          right = allAlike;
          if (!right) detail = ' (every client ties: none stands out)';
        } else {
          right = !allAlike && Array.isArray(a.clients) && a.clients.includes(guess);
        }
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
    // The results, with the picture fitted under their headline, come into
    // view; the answer stays just above them.
    $('results').scrollIntoView({ block: 'start' });
  }

  function onPredictToggle() {
    page.state.predict = $('predict-on').checked;
    page.yamlAnyway = false;
    askAgain();
    page.keepHash = false;
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
      say('It is selected: press Ctrl+C (⌘C on a Mac) to copy it.');
    };
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(() => say(done), fallback);
    } else {
      fallback();
    }
  }

  // copyLink copies the page's permalink: never a stale one (when this
  // state cannot be linked it says why and offers the YAML instead), and
  // with a warning when the link is longer than chat tools and slides keep.
  function copyLink() {
    page.keepHash = false; // what is copied is what the page shows
    if (page.lastResponse && !updateHash()) {
      // Nor may the field keep an older link to copy by hand.
      $('link-text').value = '';
      $('link-field').hidden = true;
      pageNotice(`No link was copied: this scenario is too large for a link (${page.linkError}). Share the YAML file instead.`, downloadAction);
      return;
    }
    const href = location.href;
    if (href.length > LINK_WARN_CHARS) {
      copyText(href, $('link-text'), null, `Link copied, but it is ${fmtBytes(href.length)}.`);
      pageNotice(`This link is ${fmtBytes(href.length)}: chat tools and slides may cut a link longer than about 8 KB, and a cut link opens another scenario. Share the YAML file instead.`, downloadAction);
      return;
    }
    copyText(href, $('link-text'), null, 'Link copied: paste it into your slides or a message.');
  }
  const downloadAction = { label: 'Download YAML', run: () => downloadYaml() };

  function fmtBytes(n) {
    return n < 1024 ? `${n} bytes` : n < 1 << 20 ? `${fmtNum(Math.round(n / 1024))} KB` : `${fmtNum(Math.round((n / (1 << 20)) * 10) / 10)} MB`;
  }

  // ---------- wiring ----------

  function wire() {
    $('builtin').addEventListener('change', () => {
      const name = $('builtin').value;
      if (!name) { makeOwn(); return; }
      cancelYamlEdit();
      page.yamlAnyway = false; // another file's text: hidden again while predicting
      page.state = newState({ builtin: name, predict: page.state.predict });
      syncModeInputs();
      $('download-note').hidden = true;
      if (page.sources[name]) setYamlText(page.sources[name]);
      changed({ keepGuess: false });
    });
    const ta = $('yaml');
    ta.addEventListener('input', onYamlInput);
    ta.addEventListener('scroll', () => renderGutter());
    // The gutter draws the lines in view: again when the view's size
    // changes (the panel opens, the editor is resized).
    if (typeof ResizeObserver === 'function') new ResizeObserver(() => renderGutter()).observe(ta);
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
    // A file dropped anywhere else on the page loads too, rather than the
    // browser opening it in place of the playground (and its unsaved state).
    const hasFiles = (e) => e.dataTransfer && [...e.dataTransfer.types].includes('Files');
    document.addEventListener('dragover', (e) => { if (hasFiles(e)) e.preventDefault(); });
    document.addEventListener('drop', (e) => {
      if (e.defaultPrevented || !hasFiles(e)) return; // the editor took it
      e.preventDefault();
      const f = e.dataTransfer.files && e.dataTransfer.files[0];
      if (f && document.body.dataset.state !== 'loading') loadFile(f);
    });
    $('download-yaml').addEventListener('click', downloadYaml);
    $('download-json').addEventListener('click', downloadJSON);
    // While predicting, the summary does not open the panel: only the
    // note's "show the YAML anyway" does, on purpose.
    const panel = $('yaml-panel');
    panel.querySelector('summary').addEventListener('click', (e) => { if (yamlHidden()) e.preventDefault(); });
    panel.addEventListener('toggle', () => { if (panel.open && yamlHidden()) panel.open = false; });
    $('show-yaml-anyway').addEventListener('click', () => {
      page.yamlAnyway = true;
      applyPredictView();
      $('yaml').focus();
    });
    $('goto-error').addEventListener('click', () => gotoLine(Number($('goto-error').dataset.line)));
    $('stale-goto').addEventListener('click', () => gotoLine(Number($('stale-goto').dataset.line)));
    $('reset-all').addEventListener('click', () => {
      if (!page.state.set.length) return;
      page.state.set = [];
      for (const c of page.controls) updateControl(c);
      $('reset-all').disabled = true;
      changed({ keepGuess: false });
    });
    $('copy-link').addEventListener('click', copyLink);
    $('page-notice-close').addEventListener('click', () => { $('page-notice').hidden = true; });
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
    $('headline').addEventListener('click', toggleHeadline);
    $('headline').addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); toggleHeadline(); } });
    $('actual-size').addEventListener('click', () => {
      const on = $('timeline').classList.toggle('fit-screen');
      $('actual-size').setAttribute('aria-pressed', String(on));
    });
    window.addEventListener('resize', () => fitPicture());
    $('page-notice-close').addEventListener('click', () => fitPicture());

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
    $('vs-value').addEventListener('focus', () => syncVsChoices(true));
    $('vs-value').addEventListener('change', onVsValue);
    $('vs-value').addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); onVsValue(); } });

    $('predict-on').addEventListener('change', onPredictToggle);
    $('reveal').addEventListener('click', reveal);
    $('ask-again').addEventListener('click', () => {
      askAgain();
      $('guess').focus();
    });
    // One listener for whichever #guess is in the slot (an input or a
    // select, swapped as the question changes).
    $('guess-slot').addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && e.target.id === 'guess') { e.preventDefault(); reveal(); }
    });

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
      page.state = newState({ builtin: defaultBuiltin() });
    }
    requestRun();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot);
  else boot();
})();
