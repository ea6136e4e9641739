"""`Refusal`: a request refused, with its HTTP status, a short machine word and a sentence for a person."""

from __future__ import annotations


class Refusal(Exception):
    """A request refused: HTTP status, a short error word, and what exactly was wrong."""

    def __init__(self, status: int, error: str, detail: str) -> None:
        super().__init__(f"{status} {error}: {detail}")
        self.status = status
        self.error = error
        self.detail = detail

    def to_json(self) -> dict[str, str]:
        return {"error": self.error, "detail": self.detail}
