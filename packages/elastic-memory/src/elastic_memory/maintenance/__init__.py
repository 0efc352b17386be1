"""Whole-store work over a core: export and import, backups, repair, and who owns what."""
