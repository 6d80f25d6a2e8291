"""Everything ``regen`` renders from what is on disk: badges, leaderboard, server pages, dashboard,
calculator (docs/PAGES.md).
"""
