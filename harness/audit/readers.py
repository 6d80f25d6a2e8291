"""Reading config files (JSON, JSON5, TOML, YAML) with their libraries, bounded in size, depth and nodes.

Bounds: docs/AUDIT.md, "What it reads".
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import yaml

from harness.util import yamlsafe

MAX_CONFIG_BYTES = 32 * 1024 * 1024
MAX_JSON5_BYTES = 256 * 1024
MAX_YAML_BYTES = 1024 * 1024
MAX_YAML_ALIASES = 100
MAX_TOML_BYTES = 512 * 1024
# Objects and arrays a JSON file may open (counted as "{" and "[" in the text, an upper bound): 32 MiB
# of "[[],[],…" once parsed into 600 MB of lists; a real ~/.claude.json holds far fewer.
MAX_JSON_CONTAINERS = 2_000_000
MAX_YAML_NODES = 100_000  # nodes once aliases are expanded: far above any config a person writes
MAX_YAML_DEPTH = 64


class ConfigError(ValueError):
    """A config file exists and cannot be read or parsed (``str()`` says which and why)."""


def read_text(path: Path, limit: int = MAX_CONFIG_BYTES) -> str:
    """The UTF-8 text of regular file ``path``, at most ``limit`` bytes. Raises ``ConfigError`` or
    ``FileNotFoundError``."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    if not path.is_file():
        raise ConfigError(f"{path}: not a regular file")
    if info.st_size > limit:
        raise ConfigError(f"{path}: {info.st_size:,} bytes is over the {limit:,}-byte limit for a config file")
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise ConfigError(f"{path}: over the {limit:,}-byte limit for a config file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start})") from None


def parse_json(text: str, where: str) -> object:
    """JSON, else JSONC/JSON5 (see module doc). Raises ``ConfigError``."""
    if text.count("{") + text.count("[") > MAX_JSON_CONTAINERS:
        raise ConfigError(f"{where}: opens more than {MAX_JSON_CONTAINERS:,} objects and arrays, over the limit for a "
                          "config file")
    try:
        return json.loads(text)
    except RecursionError:
        raise ConfigError(f"{where}: nested too deeply to read") from None
    except json.JSONDecodeError as strict:  # its message is the library's fixed words, never the text
        first = f"{strict.msg} at line {strict.lineno}, column {strict.colno}"
    except ValueError:
        first = "not JSON"
    if len(text.encode("utf-8")) > MAX_JSON5_BYTES:
        raise ConfigError(f"{where}: not valid JSON ({first}); files over {MAX_JSON5_BYTES:,} bytes are only read as "
                          "strict JSON")
    import json5  # loaded only when strict JSON fails

    try:
        return json5.loads(text)
    except RecursionError:
        raise ConfigError(f"{where}: nested too deeply to read") from None
    except ValueError as exc:
        # json5 says '<string>:LINE Unexpected "X" at column COL': keep the place, not the character.
        place = re.search(r":(\d+) Unexpected (end of input|.*?) at column (\d+)", str(exc))
        what = "unexpected end of input" if place and place.group(2) == "end of input" else "unexpected character"
        at = f"{what} at line {place.group(1)}, column {place.group(3)}" if place else "cannot be parsed"
        raise ConfigError(f"{where}: not valid JSON or JSON5: {at}") from None


def parse_toml(text: str, where: str) -> dict:
    """TOML via ``tomllib``, at most ``MAX_TOML_BYTES``. Raises ``ConfigError``."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_TOML_BYTES:
        raise ConfigError(f"{where}: over the {MAX_TOML_BYTES:,}-byte limit for a TOML config")
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        raise ConfigError(f"{where}: not valid TOML: {_unquoted(str(exc))[:200]}") from None
    except ValueError:  # an integer past Python's digit limit for int(): the message quotes no text
        raise ConfigError(f"{where}: not valid TOML: a number too large to read") from None


def parse_yaml(text: str, where: str) -> object:
    """YAML via PyYAML's safe loader within the ``MAX_YAML_*`` bounds (``harness.util.yamlsafe``). Raises
    ``ConfigError``."""
    class Loader(yamlsafe.BoundedLoader):
        aliases = 0

        def compose_node(self, parent, index):  # count aliases before they are resolved
            if self.check_event(yaml.AliasEvent):
                self.aliases += 1
                if self.aliases > MAX_YAML_ALIASES:
                    raise ConfigError(f"{where}: more than {MAX_YAML_ALIASES} YAML aliases")
            return super().compose_node(parent, index)

    bounds = yamlsafe.Bounds(max_bytes=MAX_YAML_BYTES, max_depth=MAX_YAML_DEPTH, max_nodes=MAX_YAML_NODES)
    try:
        root, loader = yamlsafe.compose(text, bounds, Loader)
        try:
            return yamlsafe.construct(loader, root)
        finally:
            loader.dispose()
    except ConfigError:
        raise
    except yamlsafe.YAMLLimitError as exc:
        at = f" at line {exc.line}" if exc.line else ""
        raise ConfigError(f"{where}: YAML over a limit{at}: {exc}") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(f"{where}: not valid YAML{at}: {_unquoted(exc.problem or exc.context or 'cannot be parsed')}"
                          ) from None
    except yaml.reader.ReaderError as exc:
        raise ConfigError(f"{where}: not valid YAML: a character YAML does not allow, at character {exc.position}"
                          ) from None
    except (yaml.YAMLError, RecursionError, ValueError):
        raise ConfigError(f"{where}: not valid YAML: cannot be parsed") from None


_QUOTED = re.compile(r"'<[a-z ]+>'|'[^'\n]*'|\"[^\"\n]*\"")


def _unquoted(message: str) -> str:
    """A parser's message with every quoted piece of the file replaced by ``'…'`` (its own ``'<token>'`` names kept)."""
    return _QUOTED.sub(lambda m: m.group(0) if m.group(0).startswith("'<") else "'…'", message)


def brief(value: object, limit: int = 40) -> str:
    """A config value in a few words, cut before it becomes text (``str()`` of untrusted structure is never taken)."""
    if isinstance(value, str):
        return value[:limit] + ("…" if len(value) > limit else "")
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)[:limit] if not isinstance(value, int) or value.bit_length() < 128 else "a large number"
    if isinstance(value, (list, tuple)):
        return f"a list of {len(value)} item(s)"
    if isinstance(value, dict):
        return f"an object of {len(value)} key(s)"
    return f"a {type(value).__name__}"


def load(path: Path, kind: str) -> object:
    """Read and parse ``path`` as ``kind``. Raises ``FileNotFoundError`` when absent, ``ConfigError`` when unreadable."""
    limit = {"yaml": MAX_YAML_BYTES, "toml": MAX_TOML_BYTES}.get(kind, MAX_CONFIG_BYTES)
    text = read_text(path, limit)
    parser = {"json": parse_json, "toml": parse_toml, "yaml": parse_yaml}[kind]
    return parser(text, str(path))


def kind_for(path: Path) -> str:
    """The parser a file's name suggests: ``.toml`` → toml, ``.yaml``/``.yml`` → yaml, else json."""
    suffix = path.suffix.lower()
    if suffix == ".toml":
        return "toml"
    if suffix in (".yaml", ".yml"):
        return "yaml"
    return "json"
