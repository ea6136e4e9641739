"""Players and pairings from the files organisers have: CSV (English or Chinese headers) and a FIDE TRF-like
report (the fixed columns of its `001` player lines). Text in, values out; reading the file is the caller's job.

Players CSV: `no,name,rating,club,team` (`序号,姓名,等级分,单位,队名` also work; only `name` is required, start
numbers default to the line order). Pairings CSV: `round,board,red,black,result,game_id` (`轮次,台次,红方,黑方,
结果`), players by start number or exact name; an empty black, `BYE` or `轮空` is a bye; results `1-0`, `0-1`,
`1/2-1/2` (also `=`, `½-½`, `红胜`, `黑胜`, `和`) or empty while the game is unplayed.
"""

from __future__ import annotations

import csv
import io

from xqarb.tournament.model import BLACK_WINS, DRAW, RED_WINS, Game, Player, TournamentError


class TournamentFileError(TournamentError):
    """A line of an imported file that does not say what it must; the message names the line."""


HEADERS = {
    "no": ("no", "start_no", "number", "序号", "编号"),
    "name": ("name", "player", "姓名", "棋手"),
    "rating": ("rating", "elo", "等级分"),
    "club": ("club", "province", "federation", "单位", "省市", "俱乐部"),
    "team": ("team", "队名", "队", "团队"),
    "round": ("round", "轮次", "轮"),
    "board": ("board", "台次", "台"),
    "red": ("red", "红方", "先手"),
    "black": ("black", "黑方", "后手"),
    "result": ("result", "结果"),
    "game_id": ("game_id", "game", "对局"),
}
RESULT_WORDS = {
    "1-0": RED_WINS, "0-1": BLACK_WINS, "1/2-1/2": DRAW, "½-½": DRAW, "=": DRAW, "0.5-0.5": DRAW,
    "红胜": RED_WINS, "黑胜": BLACK_WINS, "和": DRAW, "": None, "*": None,
}  # fmt: skip
BYE_WORDS = ("", "bye", "轮空", "-", "0")


def _rows(text: str, required: tuple[str, ...]) -> list[tuple[int, dict[str, str]]]:
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff")))
    header = next(reader, None)
    if header is None:
        raise TournamentFileError("the file is empty: a header line is needed")
    columns: dict[str, int] = {}
    for i, raw in enumerate(header):
        cell = raw.strip().lower()
        for key, names in HEADERS.items():
            if cell in names and key not in columns:
                columns[key] = i
    missing = [k for k in required if k not in columns]
    if missing:
        raise TournamentFileError(f"line 1: no column for {', '.join(missing)} (header was {header})")
    out = []
    for line_no, cells in enumerate(reader, start=2):
        if not any(c.strip() for c in cells):
            continue
        out.append((line_no, {k: cells[i].strip() if i < len(cells) else "" for k, i in columns.items()}))
    return out


def _int(value: str, what: str, line: int) -> int:
    try:
        return int(value)
    except ValueError:
        raise TournamentFileError(f"line {line}: {what} {value!r} is not a whole number") from None


def parse_players_csv(text: str) -> tuple[Player, ...]:
    players: list[Player] = []
    for index, (line, row) in enumerate(_rows(text, ("name",)), start=1):
        if not row["name"]:
            raise TournamentFileError(f"line {line}: the player has no name")
        no = _int(row["no"], "start number", line) if row.get("no") else index
        rating = _int(row["rating"], "rating", line) if row.get("rating") else None
        players.append(Player(no, row["name"], rating, row.get("club", ""), row.get("team", "")))
    numbers = [p.no for p in players]
    if len(set(numbers)) != len(numbers):
        raise TournamentFileError(f"start numbers repeat: {sorted(n for n in numbers if numbers.count(n) > 1)}")
    return tuple(players)


def _player_no(value: str, players: tuple[Player, ...], line: int) -> int:
    by_name = {p.name: p.no for p in players}
    if value in by_name:
        return by_name[value]
    if value.isdigit() and any(p.no == int(value) for p in players):
        return int(value)
    raise TournamentFileError(f"line {line}: no player {value!r} (by start number or name)")


def parse_pairings_csv(text: str, players: tuple[Player, ...]) -> tuple[Game, ...]:
    games: list[Game] = []
    for line, row in _rows(text, ("round", "red")):
        round_no = _int(row["round"], "round", line)
        board = _int(row["board"], "board", line) if row.get("board") else 1 + sum(g.round == round_no for g in games)
        red = _player_no(row["red"], players, line)
        black_text = row.get("black", "")
        black = None if black_text.lower() in BYE_WORDS else _player_no(black_text, players, line)
        result_text = row.get("result", "")
        if result_text not in RESULT_WORDS:
            raise TournamentFileError(f"line {line}: result {result_text!r} is not 1-0, 0-1, 1/2-1/2 or empty")
        games.append(Game(round_no, board, red, black, RESULT_WORDS[result_text] if black else None,
                          row.get("game_id", "")))  # fmt: skip
    return tuple(games)


# FIDE TRF player lines (`001`), 0-based columns: start number, name, rating, then 10 characters a round.
TRF_NO, TRF_NAME, TRF_RATING, TRF_FED, TRF_ROUNDS = (4, 8), (14, 47), (48, 52), (53, 56), 91
TRF_WIN, TRF_LOSS, TRF_DRAW = ("1", "+", "W"), ("0", "-", "L"), ("=", "D")


def parse_trf(text: str) -> tuple[str, tuple[Player, ...], tuple[Game, ...]]:
    """(event name, players, games) from a TRF-like report: `012` names the event, `001` lines the players with
    their rounds (opponent, colour w = Red / b = Black, result). A game is taken from its Red player's line; an
    opponent 0000 with a won result (`F`, `+`, `1`) is a bye; half-point and zero byes (H, Z, U) are no games."""
    name = ""
    players: list[Player] = []
    rounds: list[tuple[int, int, list[tuple[int, str, str]]]] = []
    for line_no, raw in enumerate(text.splitlines(), start=1):
        if raw.startswith("012"):
            name = raw[4:].strip()
        if not raw.startswith("001"):
            continue
        no = _int(raw[slice(*TRF_NO)].strip(), "start number", line_no)
        rating_text = raw[slice(*TRF_RATING)].strip()
        rating = _int(rating_text, "rating", line_no) if rating_text else None
        players.append(Player(no, raw[slice(*TRF_NAME)].strip(), rating, raw[slice(*TRF_FED)].strip()))
        cells = []
        for start in range(TRF_ROUNDS, len(raw), 10):
            chunk = raw[start:start + 10].ljust(8)
            opp = chunk[0:4].strip()
            cells.append((int(opp) if opp.isdigit() else 0, chunk[5], chunk[7]))
        rounds.append((line_no, no, cells))
    games: list[Game] = []
    byes: list[Game] = []
    for line_no, no, cells in rounds:
        for r, (opp, colour, res) in enumerate(cells, start=1):
            if opp == 0:
                if res in ("F", "+", "1"):
                    byes.append(Game(r, 0, no, None))
                continue
            if colour.lower() != "w":
                continue
            if res in TRF_WIN:
                result: str | None = RED_WINS
            elif res in TRF_LOSS:
                result = BLACK_WINS
            elif res in TRF_DRAW:
                result = DRAW
            elif res.strip() in ("", "*"):
                result = None
            else:
                raise TournamentFileError(f"line {line_no}: round {r} result {res!r} is not one TRF uses")
            games.append(Game(r, 0, no, opp, result))
    # TRF has no board numbers: boards in the order of the Red players' lines, byes last.
    numbered: list[Game] = []
    for g in sorted(games + byes, key=lambda g: (g.round, g.is_bye)):
        board = 1 + sum(n.round == g.round for n in numbered)
        numbered.append(Game(g.round, board, g.red, g.black, g.result))
    return name, tuple(players), tuple(numbered)
