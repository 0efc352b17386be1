"""The vector leg: the exact RAM matrix, its float16 shadow, the ANN index, BLAS threads."""
