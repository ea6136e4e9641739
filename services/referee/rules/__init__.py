"""The rules core: pure Xiangqi rules (board, moves, notation, 棋例). No I/O."""
