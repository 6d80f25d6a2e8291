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
BADGES = "badges"
CATALOG = "servers.yaml"  # not published: the input every page is drawn from
# servers.yaml is ~25 KB for ~100 entries: 1 MiB is room for thousands, and bounds the work.
CATALOG_MAX_BYTES = 1024 * 1024
AD_HOC_DIR = ".mcp-context-cost"  # not published, gitignored: `measure --command/--url` and the Action write here
STAGING_DIR = ".staging"  # not published: the publish transaction's staging directory, journal and lock
RECORD_FILE = "measurement.json"
DIVERGENCE = "results/divergence.json"
CROSS_CHECK = "results/cross-check.json"
CAPABILITY_PROBE = "results/capability-probe.json"
RELEASES = "results/releases.json"
# Everything a publish writes, and all a bot commit may carry (hand-written docs/*.md never).
PUBLISHED = (RESULTS, BADGES, HISTORY, DASHBOARD, CALCULATOR, SERVER_DIR, SPARK_DIR, TREND_DIR)


def server_page(name: str) -> str:
    return f"{SERVER_DIR}/{name}.md"


def server_html(name: str) -> str:
    return f"{SERVER_DIR}/{name}.html"


def sparkline(name: str) -> str:
    return f"{SPARK_DIR}/{name}.svg"


def trend(name: str) -> str:
    return f"{TREND_DIR}/{name}.svg"


def record(name: str) -> str:
    return f"{RESULTS}/{name}/{RECORD_FILE}"


def badge(name: str) -> str:
    return f"{BADGES}/{name}.json"


def tool_vectors(name: str) -> str:
    return f"{RESULTS}/{name}/tool-vectors.json"
