"""The scoresheet of a game (记录纸, article 9; 2011 edition 10.1), a pure value built from the game's ledger.

Article 9: "对局终了后，在记录纸上注明比赛结果及双方所用时间、犯规情况，双方棋手和监局裁判当场签字认可，为对局结束。"
The sheet therefore holds the result, each side's time used and the fouls with their articles, beside what a paper
scoresheet carries (event, round, board, players, rule set, time control, the moves in two columns as 7.5 writes
them), and room for the signatures of Red, Black and the arbiter. The arbiter's sign-off is an ArbiterDecision with
`action: "sign_off"` in the ledger; the sheet shows who signed, when, and that entry's seq and hash, so a printed
sheet is tied to the record.

Facts in (the ledger entries in their JSON form, as `GET /api/games/<id>/events` gives them, and optionally each
side's remaining time from the referee's clock model), a `Scoresheet` out, HTML from that: no I/O, no clock.
"""

from __future__ import annotations

import html
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from xqarb.referee.clock import ClockState, TimeControl, TimeControlError

SIGN_OFF_ACTION = "sign_off"
# 9 (2021): the result, the time used and the fouls are written on the sheet and signed; 10.1 in the 2011 edition.
SIGN_OFF_ARTICLES: Mapping[str, str] = {"cxa-2021": "9", "cxa-2011": "10.1"}
RESULTS = ("1-0", "0-1", "1/2-1/2")
RESULT_WORDS: Mapping[str, str] = {"1-0": "红胜 Red wins", "0-1": "黑胜 Black wins", "1/2-1/2": "和棋 Draw"}
LEVEL_WORDS: Mapping[str, str] = {"national": "全国 national", "provincial": "省级 provincial", "junior": "少年 junior"}
# A paper scoresheet's rows per column block: the moves run down the left block first, then the right (7.5).
ROWS_PER_BLOCK = 30


class SignOffRefused(Exception):
    """A sign-off the sheet cannot take: the game has not ended, it is already signed, or the result differs."""

    def __init__(self, error: str, detail: str) -> None:
        super().__init__(detail)
        self.error, self.detail = error, detail


@dataclass(frozen=True, slots=True)
class Round:
    """One row of the sheet: a round (回合, 2.1) with Red's and Black's move as written in Chinese (7.5)."""

    number: int
    red: str
    black: str


@dataclass(frozen=True, slots=True)
class FoulLine:
    side: str
    article: str
    ruleset: str
    ply: int | None
    message: str
    waived: bool  # 8.2: a foul followed at once by resigning is waived


@dataclass(frozen=True, slots=True)
class SignOff:
    """The arbiter's signature in the ledger: the ArbiterDecision sign_off entry."""

    by: str  # the principal that posted it (e.g. arbiter:chief)
    at_us: int
    result: str
    note: str
    seq: int
    hash: str
    event_id: str


@dataclass(frozen=True, slots=True)
class Scoresheet:
    game_id: str
    board_id: str
    event: str | None
    round: int | None
    board_no: int | None
    red_player: str
    black_player: str
    started_at_us: int | None
    ruleset: str
    rapid: bool
    level: str
    time_control: Mapping[str, Any] | None
    time_control_text: str
    result: str | None
    result_article: str | None
    result_reason: str | None
    ended_at_us: int | None
    red_used_ms: int | None
    black_used_ms: int | None
    plies: int
    rounds: tuple[Round, ...]
    fouls: tuple[FoulLine, ...]
    head_seq: int
    head_hash: str
    sign_off: SignOff | None

    @property
    def ended(self) -> bool:
        return self.result is not None

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["rounds"] = [[r.number, r.red, r.black] for r in self.rounds]
        out["result_text"] = RESULT_WORDS.get(self.result or "", "")
        out["sign_off_article"] = SIGN_OFF_ARTICLES.get(self.ruleset, "9")
        out["fouls_count"] = {side: sum(1 for f in self.fouls if f.side == side and not f.waived)
                              for side in ("red", "black")}
        return out


# --- facts -> sheet --------------------------------------------------------------------------------------------


def scoresheet_of(
    entries: Sequence[Mapping[str, Any]], remaining: tuple[int, int] | None = None
) -> Scoresheet:
    """The scoresheet of a game from its ledger entries (JSON form, in seq order).

    `remaining` is (Red, Black) time left by the referee's clock model at the end; without it the device's times
    on the last move are used. Time used = the time given so far (base, increments 6.1, periods reached 6.2)
    minus the time left."""
    started: Mapping[str, Any] = {}
    moves: list[Mapping[str, Any]] = []
    fouls: list[FoulLine] = []
    ended: Mapping[str, Any] | None = None
    sign_off: SignOff | None = None
    head_seq, head_hash = 0, ""
    for entry in entries:
        ev = entry["event"]
        head_seq, head_hash = entry["seq"], entry["hash"]
        kind = ev["type"]
        if kind == "GameStarted" and not started:
            started = ev
        elif kind == "MoveMade":
            # 5.8.2: a move made again at a ply replaces it and every later one (a restored position).
            moves = [m for m in moves if m["ply"] < ev["ply"]] + [ev]
        elif kind == "Ruling":
            _ruling(fouls, ev)
        elif kind == "GameEnded" and ended is None:
            ended = ev
        elif (kind == "ArbiterDecision" and ev.get("action") == SIGN_OFF_ACTION and sign_off is None
              and ended is not None):
            sign_off = SignOff(ev["source"], ev["occurred_at"], ev.get("result") or "", ev.get("note") or "",
                               entry["seq"], entry["hash"], ev["event_id"])
    tc = _time_control(started.get("time_control"))
    used = _time_used(tc, moves, remaining)
    return Scoresheet(
        game_id=str(started.get("game_id") or (entries[0]["game_id"] if entries else "")),
        board_id=str(started.get("board_id") or (entries[0]["event"]["board_id"] if entries else "")),
        event=started.get("event"), round=started.get("round"), board_no=started.get("board_no"),
        red_player=str(started.get("red_player", "")), black_player=str(started.get("black_player", "")),
        started_at_us=started.get("occurred_at"),
        ruleset=str(started.get("ruleset") or "cxa-2021"), rapid=bool(started.get("rapid", False)),
        level=str(started.get("level") or "national"),
        time_control=tc, time_control_text=time_control_text(tc),
        result=ended["result"] if ended else None, result_article=ended["article"] if ended else None,
        result_reason=ended["reason"] if ended else None, ended_at_us=ended["occurred_at"] if ended else None,
        red_used_ms=used[0], black_used_ms=used[1],
        plies=len(moves), rounds=_rounds(moves), fouls=tuple(fouls),
        head_seq=head_seq, head_hash=head_hash, sign_off=sign_off,
    )


def _ruling(fouls: list[FoulLine], ev: Mapping[str, Any]) -> None:
    if ev.get("kind") == "foul":
        fouls.append(FoulLine(ev.get("side") or "", ev["article"], ev.get("ruleset") or "", ev.get("ply"),
                              ev.get("message") or "", False))
    elif ev.get("kind") == "correction" and "foul is waived" in (ev.get("message") or ""):
        # 8.2: the side resigned at once after its foul; the referee's correction waives that side's last foul.
        for i in range(len(fouls) - 1, -1, -1):
            if fouls[i].side == ev.get("side") and not fouls[i].waived:
                f = fouls[i]
                fouls[i] = FoulLine(f.side, f.article, f.ruleset, f.ply, f.message, True)
                break


def _time_control(raw: Any) -> Mapping[str, Any] | None:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            return None
    return raw if isinstance(raw, Mapping) else None


def _time_used(
    tc: Mapping[str, Any] | None, moves: Sequence[Mapping[str, Any]], remaining: tuple[int, int] | None
) -> tuple[int | None, int | None]:
    if tc is None:
        return None, None
    try:
        clock = ClockState.start(TimeControl.from_json(tc), 0)
    except TimeControlError:
        return None, None
    left: list[int | None] = list(remaining) if remaining is not None else [None, None]
    for m in moves:
        clock = clock.credit_move(m["side"])  # 6.1 increment / 6.2 the next period's time, as the referee credits
    if remaining is None and moves:
        last = moves[-1]
        left = [last.get("red_ms"), last.get("black_ms")]
    given = (clock.red_ms, clock.black_ms)
    return tuple(None if r is None else max(0, g - r) for g, r in zip(given, left, strict=True))  # type: ignore[return-value]


def _rounds(moves: Sequence[Mapping[str, Any]]) -> tuple[Round, ...]:
    rows: list[list[Any]] = []
    for m in moves:
        text = m.get("chinese") or m.get("iccs") or ""
        if m["side"] == "red" or not rows or rows[-1][2]:
            rows.append([len(rows) + 1, "", ""])
        rows[-1][1 if m["side"] == "red" else 2] = text
    return tuple(Round(n, r, b) for n, r, b in rows)


def _minutes(ms: int) -> str:
    if ms % 60_000 == 0:
        return f"{ms // 60_000}分钟"
    if ms < 60_000:
        return f"{ms / 1000:g}秒"
    return f"{ms / 60_000:g}分钟"


def time_control_text(tc: Mapping[str, Any] | None) -> str:
    """The time control in the words of chapter 6 (6.1 加秒, 6.2 限时限着, 6.3/6.4 包干, 6.5 贴时)."""
    if tc is None:
        return "—"
    try:
        t = TimeControl.from_json(tc)
    except TimeControlError:
        return json.dumps(tc, ensure_ascii=False)
    if t.scheme == "increment":
        text = f"每方基本用时{_minutes(t.red_base_ms)}，每走一步加{_minutes(t.increment_ms)} (6.1)"
    elif t.scheme == "sudden_death":
        text = f"每方{_minutes(t.red_base_ms)}包干 ({'6.4' if t.red_base_ms <= 15 * 60_000 else '6.3'})"
    else:
        parts = []
        for p in t.periods:
            moves = f"走满{p.moves}着" if p.moves is not None else "包干"
            parts.append(f"{_minutes(p.ms)}{moves}{'（以后每时限同）' if p.repeat else ''}")
        text = "，".join(parts) + " (6.2)"
    if t.black_base_ms != t.red_base_ms:
        text += f"；黑方贴时：基本用时{_minutes(t.black_base_ms)} (6.5)"
    return text


def check_sign_off(sheet: Scoresheet, result: str) -> None:
    """9: the sheet is signed once the game has ended, once, for the result it records (SignOffRefused if not)."""
    if not sheet.ended:
        raise SignOffRefused(
            "game_in_progress",
            f"game {sheet.game_id} has not ended (no GameEnded in the ledger after {sheet.head_seq} entries): "
            f"the scoresheet is signed once the result stands (article 9)")
    if sheet.sign_off is not None:
        s = sheet.sign_off
        raise SignOffRefused(
            "already_signed", f"game {sheet.game_id}'s scoresheet was signed by {s.by} (ledger seq {s.seq})")
    if result and result != sheet.result:
        raise SignOffRefused(
            "result_mismatch",
            f"the sign-off names result {result[:20]!r}, but the ledger records {sheet.result} "
            f"({sheet.result_article}); the sheet is signed for the recorded result")


# --- sheet -> HTML ---------------------------------------------------------------------------------------------


def _utc(us: int | None) -> str:
    if us is None:
        return "—"
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(us / 1e6))


def _hms(ms: int | None) -> str:
    if ms is None:
        return "—"
    s = ms // 1000
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def _side_word(side: str) -> str:
    return {"red": "红方 Red", "black": "黑方 Black"}.get(side, side)


_CSS = """
@page { size: A4; margin: 10mm 12mm; }
* { box-sizing: border-box; }
body { font-family: "Noto Serif CJK SC", "Noto Sans CJK SC", "WenQuanYi Micro Hei", serif; color: #111;
       margin: 0 auto; max-width: 186mm; padding: 6mm 0; font-size: 9.5pt; line-height: 1.25; }
h1 { text-align: center; font-size: 15pt; margin: 0 0 1mm; letter-spacing: .2em; }
h1 small { display: block; font-size: 8pt; letter-spacing: 0; font-weight: normal; color: #444; }
table { border-collapse: collapse; width: 100%; }
td, th { border: 0.25mm solid #222; padding: .6mm 1.2mm; vertical-align: top; }
th { background: #eee; font-weight: normal; white-space: nowrap; text-align: left; }
.red { color: #b3261e; }
.moves { display: flex; gap: 4mm; margin-top: 2mm; }
.moves table td, .moves table th { text-align: center; padding: 0 1mm; height: 4.1mm; font-size: 9pt; }
.moves td.n { width: 8mm; color: #444; }
section { margin-top: 2mm; }
h2 { font-size: 10pt; margin: 0 0 1mm; }
.sign { display: grid; grid-template-columns: 1fr 1fr 1fr; gap: 6mm; margin-top: 12mm; }
.sign div { border-top: 0.3mm solid #222; padding-top: 1mm; text-align: center; }
.ledger { font-family: monospace; font-size: 7.5pt; word-break: break-all; color: #333; margin: 1mm 0 0; }
.signed { border: 0.5mm solid #1b5e20; padding: 1.5mm; margin-top: 2mm; }
.actions { text-align: right; }
@media print { .actions { display: none; } body { padding: 0; max-width: none; }
  .moves, .sign, .signed { break-inside: avoid; } }
"""


def _info_table(sheet: Scoresheet) -> str:
    e = html.escape
    rules = f"{sheet.ruleset}{'，快棋 rapid' if sheet.rapid else ''}，{LEVEL_WORDS.get(sheet.level, sheet.level)}"
    result = "对局进行中 in progress"
    if sheet.result:
        result = (f"<b>{e(RESULT_WORDS.get(sheet.result, sheet.result))}</b> {e(sheet.result)}"
                  f"（{e(sheet.result_article or '')}：{e(sheet.result_reason or '')}）")
    rows = [
        ("赛事 Event", e(sheet.event or "—"), "轮次 Round", e(str(sheet.round or "—"))),
        ("台次 Board", e(str(sheet.board_no or "—")), "棋桌 Venue board", e(sheet.board_id)),
        ("红方 Red", f'<span class="red">{e(sheet.red_player)}</span>', "黑方 Black", e(sheet.black_player)),
        ("日期 Date", e(_utc(sheet.started_at_us)), "规则 Rules", e(rules)),
        ("计时 Time control", e(sheet.time_control_text), "着数 Plies", str(sheet.plies)),
    ]
    body = "".join(f"<tr><th>{a}</th><td>{b}</td><th>{c}</th><td>{d}</td></tr>" for a, b, c, d in rows)
    body += f'<tr><th>结果 Result</th><td colspan="3">{result}</td></tr>'
    body += (f"<tr><th>红方用时 Red used</th><td>{_hms(sheet.red_used_ms)}</td>"
             f"<th>黑方用时 Black used</th><td>{_hms(sheet.black_used_ms)}</td></tr>")
    return f'<table class="info">{body}</table>'


def _moves_tables(sheet: Scoresheet) -> str:
    rounds = list(sheet.rounds)
    per_block = max(ROWS_PER_BLOCK, (len(rounds) + 1) // 2)
    blocks = []
    for start in (0, per_block):
        rows = []
        for n in range(start + 1, start + per_block + 1):
            r = rounds[n - 1] if n <= len(rounds) else Round(n, "", "")
            rows.append(f'<tr><td class="n">{n}</td><td class="red">{html.escape(r.red)}</td>'
                        f"<td>{html.escape(r.black)}</td></tr>")
        blocks.append("<table><tr><th>回合</th><th>红方 Red</th><th>黑方 Black</th></tr>" + "".join(rows)
                      + "</table>")
    return '<div class="moves">' + "".join(blocks) + "</div>"


def _fouls_table(sheet: Scoresheet) -> str:
    if not sheet.fouls:
        return "<p>无 none</p>"
    rows = "".join(
        f"<tr><td>{_side_word(f.side)}</td><td>{html.escape(f.article)}</td><td>{f.ply if f.ply is not None else ''}"
        f"</td><td>{html.escape(f.message)}{'（8.2 免判 waived）' if f.waived else ''}</td></tr>"
        for f in sheet.fouls)
    count = {s: sum(1 for f in sheet.fouls if f.side == s and not f.waived) for s in ("red", "black")}
    return ("<table><tr><th>方 Side</th><th>条款 Article</th><th>着 Ply</th><th>情况 What</th></tr>" + rows
            + f'<tr><td colspan="4">红方犯规 {count["red"]} 次，黑方犯规 {count["black"]} 次</td></tr></table>')


def _signatures(sheet: Scoresheet) -> str:
    e = html.escape
    out = ('<div class="sign"><div>红方签字 Red</div><div>黑方签字 Black</div>'
           '<div>监局裁判签字 Arbiter</div></div>')
    s = sheet.sign_off
    if s is not None:
        out += (f'<div class="signed">裁判已签认 Signed off by the arbiter: <b>{e(s.by)}</b>，{e(_utc(s.at_us))}，'
                f"结果 {e(s.result)}{('，' + e(s.note)) if s.note else ''}"
                f'<div class="ledger">ledger seq {s.seq} · hash {e(s.hash)} · event {e(s.event_id)}</div></div>')
    return out


# After a sign-off is accepted the page reloads this much later (ms): the referee writes it to the ledger first.
RELOAD_AFTER_SIGN_MS = 1500


def _actions(sheet: Scoresheet) -> str:
    """Print, and (for an ended, unsigned game) the arbiter's sign-off; none of it is printed."""
    out = '<div class="actions"><button onclick="window.print()">打印 Print</button>'
    if sheet.ended and sheet.sign_off is None:
        game = json.dumps(sheet.game_id).replace("<", "\\u003c")
        out += (
            ' <input id="token" type="password" placeholder="arbiter token" size="14">'
            ' <button id="sign">裁判签认 Sign off</button> <span id="answer"></span>'
            f"<script>const G = {game};"
            'document.getElementById("sign").addEventListener("click", async () => {'
            ' const token = document.getElementById("token").value.trim();'
            ' const r = await fetch(`/api/games/${encodeURIComponent(G)}/actions`, {method: "POST",'
            '  body: JSON.stringify({type: "ArbiterDecision", action: "sign_off"}),'
            '  headers: {"Content-Type": "application/json", "Authorization": `Bearer ${token}`}});'
            ' const a = await r.json();'
            ' document.getElementById("answer").textContent = r.status === 202 ? "signed" : `${a.error}: ${a.detail}`;'
            f" if (r.status === 202) setTimeout(() => location.reload(), {RELOAD_AFTER_SIGN_MS});"
            "});</script>"
        )
    return out + "</div>"


def render_html(sheet: Scoresheet) -> str:
    """The sheet as one self-contained HTML page, laid out for A4 (@page, @media print)."""
    e = html.escape
    title = f"对局记录 {sheet.red_player} – {sheet.black_player}"
    article = SIGN_OFF_ARTICLES.get(sheet.ruleset, "9")
    return (
        '<!doctype html><html lang="zh-Hans"><head><meta charset="utf-8">'
        f"<title>{e(title)}</title><style>{_CSS}</style></head><body>"
        + _actions(sheet)
        + f"<h1>象棋对局记录表<small>Xiangqi scoresheet (article {e(article)}) · game {e(sheet.game_id)}</small></h1>"
        + _info_table(sheet) + _moves_tables(sheet)
        + f"<section><h2>犯规 Fouls</h2>{_fouls_table(sheet)}</section>"
        + _signatures(sheet)
        + f'<p class="ledger">ledger: {sheet.head_seq} entries · head {e(sheet.head_hash)}</p>'
        "</body></html>"
    )
