"""Where every published file lives, relative to the repository root (POSIX paths).

    results/leaderboard.md, results/leaderboard.csv     the leaderboard
    docs/servers/<name>.md                              one page per catalog entry
    docs/servers/<name>.html                            the same page as HTML (what GitHub Pages serves)
    docs/sparklines/<name>.svg                          small trend picture (leaderboard, dashboard)
    docs/trends/<name>.svg                              larger trend chart (server page)
    docs/index.html                                     the dashboard (GitHub Pages root)
    docs/calculator.html                                the setup calculator
    docs/METHODOLOGY.md                                 hand-written; every generated page links it
    results/<name>/tool-vectors.json                    per-tool token vectors (cost-regression/v1)
    results/regressions.md, results/regressions.json    cost movement (cost-regression/v1)
    results/capture-index.json                          capture index (capture-index/v1)
    results/tool-shape.json                             tool-shape baseline (tool-shape/v1)
"""

LEADERBOARD_MD = "results/leaderboard.md"
LEADERBOARD_CSV = "results/leaderboard.csv"
DASHBOARD = "docs/index.html"
CALCULATOR = "docs/calculator.html"
METHODOLOGY = "docs/METHODOLOGY.md"
SERVER_DIR, SPARK_DIR, TREND_DIR = "docs/servers", "docs/sparklines", "docs/trends"
HISTORY = "history.csv"
RESULTS = "results"
REGRESSIONS_MD = "results/regressions.md"
REGRESSIONS_JSON = "results/regressions.json"
CAPTURE_INDEX = "results/capture-index.json"
TOOL_SHAPE = "results/tool-shape.json"


def server_page(name: str) -> str:
    return f"{SERVER_DIR}/{name}.md"


def server_html(name: str) -> str:
    """The HTML rendering of :func:`server_page`: the dashboard links here."""
    return f"{SERVER_DIR}/{name}.html"


def sparkline(name: str) -> str:
    return f"{SPARK_DIR}/{name}.svg"


def trend(name: str) -> str:
    return f"{TREND_DIR}/{name}.svg"


def record(name: str) -> str:
    return f"{RESULTS}/{name}/measurement.json"


def tool_vectors(name: str) -> str:
    return f"{RESULTS}/{name}/tool-vectors.json"
