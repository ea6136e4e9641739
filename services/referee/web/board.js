// Shared by the three pages: drawing a Xiangqi board from a FEN as SVG, clock and text helpers. No build step.
"use strict";

const XQ = (() => {
  const START_FEN = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1";
  // Piece characters as players write them: red 帥仕相傌俥炮兵, black 將士象馬車砲卒.
  const GLYPH = { K: "帥", A: "仕", B: "相", N: "傌", R: "俥", C: "炮", P: "兵",
                  k: "將", a: "士", b: "象", n: "馬", r: "車", c: "砲", p: "卒",
                  X: "?", x: "?" };

  // FEN -> 10 ranks (rank 9 first) of 9 cells, each a piece letter or "".
  function parseFen(fen) {
    const rows = String(fen || START_FEN).split(" ")[0].split("/");
    const grid = [];
    for (const row of rows) {
      const cells = [];
      for (const ch of row) {
        if (/[0-9]/.test(ch)) { for (let i = 0; i < Number(ch); i++) cells.push(""); }
        else cells.push(ch);
      }
      while (cells.length < 9) cells.push("");
      grid.push(cells.slice(0, 9));
    }
    while (grid.length < 10) grid.push(Array(9).fill(""));
    return grid;
  }

  // An SVG element of the position; `opts.size` is the width in pixels, `opts.highlight` ICCS squares ("h2","e2").
  function boardSvg(fen, opts = {}) {
    const size = opts.size || 270;
    const cell = 30, pad = 20, w = cell * 8 + pad * 2, h = cell * 9 + pad * 2;
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
    svg.setAttribute("width", size);
    svg.setAttribute("height", Math.round(size * h / w));
    svg.setAttribute("class", "xq-board");
    const add = (tag, attrs, text) => {
      const el = document.createElementNS(ns, tag);
      for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
      if (text !== undefined) el.textContent = text;
      svg.appendChild(el);
      return el;
    };
    add("rect", { x: 0, y: 0, width: w, height: h, class: "xq-bg" });
    const X = f => pad + f * cell, Y = r => pad + (9 - r) * cell; // file 0..8 (a..i), rank 0..9
    for (let r = 0; r <= 9; r++) add("line", { x1: X(0), y1: Y(r), x2: X(8), y2: Y(r), class: "xq-line" });
    for (let f = 0; f <= 8; f++) {
      if (f === 0 || f === 8) add("line", { x1: X(f), y1: Y(0), x2: X(f), y2: Y(9), class: "xq-line" });
      else {
        add("line", { x1: X(f), y1: Y(0), x2: X(f), y2: Y(4), class: "xq-line" });
        add("line", { x1: X(f), y1: Y(5), x2: X(f), y2: Y(9), class: "xq-line" });
      }
    }
    for (const [r0, r1] of [[0, 2], [7, 9]]) { // the palaces
      add("line", { x1: X(3), y1: Y(r0), x2: X(5), y2: Y(r1), class: "xq-line" });
      add("line", { x1: X(5), y1: Y(r0), x2: X(3), y2: Y(r1), class: "xq-line" });
    }
    add("text", { x: X(2), y: (Y(4) + Y(5)) / 2 + 5, class: "xq-river" }, "楚 河");
    add("text", { x: X(6), y: (Y(4) + Y(5)) / 2 + 5, class: "xq-river" }, "漢 界");
    const hl = new Set(opts.highlight || []);
    for (const sq of hl) {
      const f = sq.charCodeAt(0) - 97, r = Number(sq[1]);
      if (f >= 0 && f < 9 && r >= 0 && r <= 9) add("rect", { x: X(f) - 14, y: Y(r) - 14, width: 28, height: 28, class: "xq-hl" });
    }
    const marks = [];  // `opts.marks`: [{point: "e4", kind: "moved" | "touched" | "disputed"}], ringed over the pieces
    for (const m of opts.marks || []) {
      const f = m.point.charCodeAt(0) - 97, r = Number(m.point[1]);
      if (f >= 0 && f < 9 && r >= 0 && r <= 9) marks.push([X(f), Y(r), m]);
    }
    const grid = parseFen(fen);
    for (let i = 0; i < 10; i++) {
      for (let f = 0; f < 9; f++) {
        const p = grid[i][f];
        if (!p) continue;
        const r = 9 - i, red = p === p.toUpperCase();
        add("circle", { cx: X(f), cy: Y(r), r: 13, class: red ? "xq-piece xq-red" : "xq-piece xq-black" });
        add("text", { x: X(f), y: Y(r) + 5, class: red ? "xq-glyph xq-red" : "xq-glyph xq-black" }, GLYPH[p] || p);
      }
    }
    for (const [x, y, m] of marks) add("circle", { cx: x, cy: y, r: 15.5, class: `xq-mark xq-mark-${m.kind}`, "data-point": m.point });
    return svg;
  }

  function clock(ms) {
    // ASCII: an en dash reads as 一 (one) in a CJK font.
    if (ms === null || ms === undefined) return "--:--";
    const s = Math.max(0, Math.floor(ms / 1000));
    const hh = Math.floor(s / 3600), mm = Math.floor(s / 60) % 60, ss = s % 60;
    const two = n => String(n).padStart(2, "0");
    return hh > 0 ? `${hh}:${two(mm)}:${two(ss)}` : `${mm}:${two(ss)}`;
  }

  // A board point (ICCS "e4") -> pixel of a camera frame, through the board's calibration (BoardCalibrated):
  // `corners` are the image positions of a9, i9, i0, a0; board plane u = file (a..i -> 0..8), v = 9 - rank.
  function solve(a, b) {  // Gaussian elimination with partial pivoting: a x = b, a n x n
    const n = b.length, m = a.map((row, i) => [...row, b[i]]);
    for (let c = 0; c < n; c++) {
      let p = c;
      for (let r = c + 1; r < n; r++) if (Math.abs(m[r][c]) > Math.abs(m[p][c])) p = r;
      [m[c], m[p]] = [m[p], m[c]];
      if (Math.abs(m[c][c]) < 1e-12) return null;
      for (let r = 0; r < n; r++) {
        if (r === c) continue;
        const k = m[r][c] / m[c][c];
        for (let j = c; j <= n; j++) m[r][j] -= k * m[c][j];
      }
    }
    return m.map((row, i) => row[n] / row[i]);
  }
  function boardToImage(calibration) {
    const uv = [[0, 0], [8, 0], [8, 9], [0, 9]];
    const c = calibration && calibration.corners;
    let h = null;
    if (Array.isArray(c) && c.length === 4) {
      const a = [], b = [];
      uv.forEach(([u, v], i) => {
        const [x, y] = c[i];
        a.push([u, v, 1, 0, 0, 0, -u * x, -v * x]); b.push(x);
        a.push([0, 0, 0, u, v, 1, -u * y, -v * y]); b.push(y);
      });
      const s = solve(a, b);
      if (s) h = [...s, 1];
    } else if (calibration && Array.isArray(calibration.homography) && calibration.homography.length === 9) {
      const [a, b, c2, d, e, f, g, hh, i] = calibration.homography;  // image -> board: invert it
      const inv = [e * i - f * hh, c2 * hh - b * i, b * f - c2 * e, f * g - d * i, a * i - c2 * g, c2 * d - a * f,
                   d * hh - e * g, b * g - a * hh, a * e - b * d];
      if (Math.abs(inv[8]) > 1e-12) h = inv.map(v => v / inv[8]);
    }
    if (!h) return null;
    return point => {
      const u = point.charCodeAt(0) - 97, v = 9 - Number(point[1]);
      const w = h[6] * u + h[7] * v + h[8];
      return [(h[0] * u + h[1] * v + h[2]) / w, (h[3] * u + h[4] * v + h[5]) / w];
    };
  }

  // A ledger time (microseconds since the epoch) as ISO date and local time: "2026-12-06 14:03:09".
  function dateTime(us) {
    const d = new Date(us / 1000), two = n => String(n).padStart(2, "0");
    return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ` +
      `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
  }

  function el(tag, attrs = {}, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (k === "class") e.className = v; else if (k === "text") e.textContent = v; else e.setAttribute(k, v);
    }
    for (const c of children) if (c !== null && c !== undefined) e.append(c);
    return e;
  }

  async function getJson(url) {
    // An arbiter's token (kept by the review page) sees the boards live; without one, the broadcast delay holds.
    const token = sessionStorage.getItem("xq-arbiter-token");
    const headers = token ? { "Authorization": `Bearer ${token}` } : {};
    const r = await fetch(url, { cache: "no-store", headers });
    if (!r.ok) throw new Error(`${url}: ${r.status} ${await r.text()}`);
    return r.json();
  }

  // An <img> of an API picture (an evidence frame). An <img> sends no Authorization header: with the arbiter's
  // token the picture is fetched with it (live, inside the broadcast delay) and shown from memory.
  function image(url, alt) {
    const img = el("img", { src: url, alt, "data-src": url });
    const token = sessionStorage.getItem("xq-arbiter-token");
    if (token) {
      img.removeAttribute("src");
      fetch(url, { headers: { "Authorization": `Bearer ${token}` } })
        .then(r => (r.ok ? r.blob() : Promise.reject(new Error(`${r.status}`))))
        .then(blob => { img.src = URL.createObjectURL(blob); })
        .catch(() => { img.alt = `${alt} (not available)`; });
    }
    return img;
  }

  function param(name) { return new URLSearchParams(location.search).get(name); }

  // The referee's state JSON, wherever its fields are: FEN, clocks, fouls, obligations.
  function stateFields(state) {
    const s = state || {};
    const pos = s.position;
    const fen = (typeof pos === "string" ? pos : (pos && pos.fen)) || s.fen || START_FEN;
    const clocks = s.clocks || {};
    const red = clocks.red_ms ?? (clocks.red && clocks.red.ms) ?? clocks.red ?? s.red_ms ?? null;
    const black = clocks.black_ms ?? (clocks.black && clocks.black.ms) ?? clocks.black ?? s.black_ms ?? null;
    return { fen, redMs: typeof red === "number" ? red : null, blackMs: typeof black === "number" ? black : null,
             fouls: s.fouls ?? null, obligations: s.pending ?? s.obligations ?? null, result: s.result ?? null };
  }

  // Fouls as the referee's state lists them ({red: [{article, message, ...}], black: [...]}), for a person.
  function foulsText(fouls, names = { red: "red", black: "black" }) {
    if (!fouls) return "-";
    return ["red", "black"].map(side => {
      const list = Array.isArray(fouls[side]) ? fouls[side] : [];
      return `${names[side]} ${list.length}` + (list.length ? " (" + list.map(f => f.article).join(", ") + ")" : "");
    }).join(" · ");
  }

  function obligationsText(pending) {
    if (!pending || !pending.length) return "none";
    return pending.map(p => [p.kind, p.side, p.article, p.text || p.reason || (p.points || []).join("/")]
      .filter(Boolean).join(" ")).join("; ");
  }

  return { START_FEN, parseFen, boardSvg, boardToImage, dateTime, clock, el, getJson, image, param, stateFields, foulsText, obligationsText };
})();
