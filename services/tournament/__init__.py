"""Tournaments (articles 10 to 14): players, rounds, pairings, results into standings with the tie-breaks of 14.

A pure core: values in, values out. The HTTP adapter (xqarb.referee.tournament_api) derives an event from the
organiser's pairings and the games' recorded results, and serves it."""
