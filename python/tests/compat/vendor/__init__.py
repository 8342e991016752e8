"""Third-party test files, kept as their authors wrote them."""
