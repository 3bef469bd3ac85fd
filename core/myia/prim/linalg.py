"""Products of arrays beyond dot: batched matmul, and what einsum needs (issue 18)."""
