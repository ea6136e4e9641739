"""Referee: the event-sourced game, the rulings and the ledger."""
