"""Where every published file lives, relative to the repository root (POSIX paths); the pages that
are hand-written (docs/METHODOLOGY.md) are listed too because every page links them.
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
    return f"{SERVER_DIR}/{name}.html"


def sparkline(name: str) -> str:
    return f"{SPARK_DIR}/{name}.svg"


def trend(name: str) -> str:
    return f"{TREND_DIR}/{name}.svg"


def record(name: str) -> str:
    return f"{RESULTS}/{name}/measurement.json"


def tool_vectors(name: str) -> str:
    return f"{RESULTS}/{name}/tool-vectors.json"
