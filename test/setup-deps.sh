#!/usr/bin/env bash
# Installs what the integration tests need before `vitest run` (npm test runs this first):
# PostgreSQL, MariaDB, ClickHouse and Chromium from Debian when running as root, and the Temporal
# CLI built once with `go install` into ~/.cache/countersign/bin. Idempotent; when everything is
# present it only looks around and prints one line. Without root it says what to install and
# carries on: the test harness then fails with the same advice (DESIGN.md: missing servers fail).
set -euo pipefail

CACHE_DIR="${HOME}/.cache/countersign"
CACHE_BIN="${CACHE_DIR}/bin"
# Newer tags of the CLI no longer build with `go install ...@version` (replace directives).
TEMPORAL_CLI_MODULE="github.com/temporalio/cli/cmd/temporal@v1.5.1"
# Helm for the chart test (test/foundation/helm.test.ts); v3 still builds with `go install`.
HELM_MODULE="helm.sh/helm/v3/cmd/helm@v3.22.0"
# v1.5.1's go.mod says `go 1.25.0`; used only when no Go >= 1.21 is installed (see ensure_go).
GO_BOOTSTRAP_VERSION="1.25.0"

log() { printf 'setup-deps: %s\n' "$*" >&2; }
is_root() { [ "$(id -u)" -eq 0 ]; }

# First executable among the names, on PATH or in sbin (not on a normal user's PATH).
find_bin() {
  local name dir
  for name in "$@"; do
    if command -v "$name" >/dev/null 2>&1; then command -v "$name"; return 0; fi
    for dir in /usr/sbin /usr/local/sbin; do
      if [ -x "${dir}/${name}" ]; then echo "${dir}/${name}"; return 0; fi
    done
  done
  return 1
}

# Same search order as test/harness/postgres.ts: PATH, else the newest /usr/lib/postgresql/N/bin.
find_postgres() {
  if command -v postgres >/dev/null 2>&1 && command -v initdb >/dev/null 2>&1; then command -v postgres; return 0; fi
  local newest
  newest="$(ls -d /usr/lib/postgresql/*/bin/postgres 2>/dev/null | sort -V | tail -n 1)"
  [ -n "$newest" ] && [ -x "$(dirname "$newest")/initdb" ] && echo "$newest"
}

# Same search order as test/harness/temporal.ts.
find_temporal() {
  if [ -n "${TEMPORAL_CLI_PATH:-}" ]; then
    [ -x "$TEMPORAL_CLI_PATH" ] && echo "$TEMPORAL_CLI_PATH" && return 0
    log "TEMPORAL_CLI_PATH=${TEMPORAL_CLI_PATH} is not an executable; the harness will fail until it is fixed or unset"
    return 1
  fi
  command -v temporal 2>/dev/null && return 0
  [ -x "${CACHE_BIN}/temporal" ] && echo "${CACHE_BIN}/temporal"
}

# --- Debian packages --------------------------------------------------------------------------

missing_packages() {
  local pkgs=()
  find_postgres >/dev/null || pkgs+=(postgresql)
  find_bin mariadbd mysqld >/dev/null || pkgs+=(mariadb-server)
  find_bin clickhouse-server clickhouse >/dev/null || pkgs+=(clickhouse-server)
  [ -x /usr/bin/chromium ] || pkgs+=(chromium)
  find_bin openssl >/dev/null || pkgs+=(openssl)
  echo "${pkgs[*]:-}"
}

apt_lists_present() { compgen -G '/var/lib/apt/lists/*_Packages' >/dev/null; }

# Set while our own policy-rc.d is in place, so an interrupted install still removes it.
OWN_POLICY=''
trap '[ -n "$OWN_POLICY" ] && rm -f "$OWN_POLICY"' EXIT

apt_install() {
  # The server packages start their system services on install; they would run for nothing (the
  # harness starts its own on free ports). policy-rc.d exit 101 is Debian's way to say "do not
  # start services" (invoke-rc.d and deb-systemd-invoke both honour it). Only add one of our own.
  local policy=/usr/sbin/policy-rc.d
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod 755 "$policy"
    OWN_POLICY="$policy"
  fi
  local install=(env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends -o Dpkg::Use-Pty=0 "$@")
  if ! apt_lists_present; then
    log "apt-get update"
    apt-get update -qq
  fi
  # Stale package lists point at superseded versions (404): refresh once and retry.
  if ! "${install[@]}" </dev/null; then
    log "install failed; apt-get update and retry"
    apt-get update -qq
    "${install[@]}" </dev/null
  fi
  if [ -n "$OWN_POLICY" ]; then
    rm -f "$OWN_POLICY"
    OWN_POLICY=''
  fi
  # Belt and braces where services started anyway: stop and disable them (harmless when absent).
  if [ -d /run/systemd/system ]; then
    systemctl disable --now postgresql mariadb clickhouse-server >/dev/null 2>&1 || true
  fi
}

# --- Temporal CLI -----------------------------------------------------------------------------

# A Go >= 1.21 on this machine, if any: it downloads the toolchain go.mod asks for by itself
# (GOTOOLCHAIN=auto, from the module proxy).
usable_go() {
  local go minor
  go="$(find_bin go 2>/dev/null || find_bin /usr/local/go/bin/go 2>/dev/null)" || return 1
  minor="$("$go" env GOVERSION 2>/dev/null | sed -nE 's/^go1\.([0-9]+).*/\1/p')"
  [ -n "$minor" ] && [ "$minor" -ge 21 ] && echo "$go"
}

# Prints a `go` that can build the CLI. Without a usable one, fetch Go itself from the module
# proxy, which serves every Go release as the module golang.org/toolchain (as GOTOOLCHAIN does).
ensure_go() {
  if usable_go; then return 0; fi
  local root="${CACHE_DIR}/go${GO_BOOTSTRAP_VERSION}"
  if [ ! -x "${root}/bin/go" ]; then
    local arch proxy version zip
    case "$(uname -m)" in x86_64) arch=amd64 ;; aarch64 | arm64) arch=arm64 ;; *) arch="$(uname -m)" ;; esac
    proxy="${GOPROXY:-https://proxy.golang.org}"
    proxy="${proxy%%[,|]*}"
    case "$proxy" in http*) ;; *) proxy=https://proxy.golang.org ;; esac
    version="v0.0.1-go${GO_BOOTSTRAP_VERSION}.linux-${arch}"
    zip="$(mktemp)"
    log "fetching Go ${GO_BOOTSTRAP_VERSION} from ${proxy} (golang.org/toolchain@${version})"
    if command -v curl >/dev/null 2>&1; then
      curl -fsSL -o "$zip" "${proxy}/golang.org/toolchain/@v/${version}.zip"
    else
      wget -q -O "$zip" "${proxy}/golang.org/toolchain/@v/${version}.zip"
    fi
    local unpack
    unpack="$(mktemp -d)"
    unzip -q "$zip" -d "$unpack"
    rm -f "$zip"
    # Module zips keep no file modes: mark the tools executable as the go command itself does.
    chmod -R a+x "${unpack}/golang.org/toolchain@${version}/bin" "${unpack}/golang.org/toolchain@${version}/pkg/tool"
    rm -rf "$root"
    mkdir -p "$CACHE_DIR"
    mv "${unpack}/golang.org/toolchain@${version}" "$root"
    rm -rf "$unpack"
  fi
  echo "${root}/bin/go"
}

# go_build NAME MODULE WHAT: builds MODULE's binary NAME into the cache once. Two test runs
# starting at once must not build twice or see a half-written binary (one lock per binary).
go_build() {
  local name="$1" module="$2" what="$3" lock go staging
  mkdir -p "$CACHE_BIN"
  exec {lock}>"${CACHE_DIR}/${name}-build.lock"
  flock "$lock"
  if [ -x "${CACHE_BIN}/${name}" ]; then exec {lock}>&-; return 0; fi
  go="$(ensure_go)"
  staging="$(mktemp -d "${CACHE_DIR}/build.XXXXXX")"
  log "building ${what} (go install ${module}); this takes a few minutes, once"
  GOTOOLCHAIN="${GOTOOLCHAIN:-auto}" GOBIN="$staging" "$go" install "$module" </dev/null
  mv "${staging}/${name}" "${CACHE_BIN}/${name}"
  rmdir "$staging"
  exec {lock}>&-
  log "built ${CACHE_BIN}/${name}"
}

build_temporal() { go_build temporal "$TEMPORAL_CLI_MODULE" "the Temporal CLI"; }

# Same search order as test/foundation/helm.test.ts.
find_helm() {
  if [ -n "${HELM_PATH:-}" ]; then [ -x "$HELM_PATH" ] && echo "$HELM_PATH"; return; fi
  [ -x "${CACHE_BIN}/helm" ] && echo "${CACHE_BIN}/helm" && return 0
  command -v helm 2>/dev/null
}

build_helm() { go_build helm "$HELM_MODULE" "Helm"; }

# --- main -------------------------------------------------------------------------------------

temporal_needs_go_bootstrap() {
  ! find_temporal >/dev/null 2>&1 && [ -z "${TEMPORAL_CLI_PATH:-}" ] && ! usable_go >/dev/null &&
    [ ! -x "${CACHE_DIR}/go${GO_BOOTSTRAP_VERSION}/bin/go" ]
}

# `npm run dev`: only the Temporal CLI matters, and only when dev mode will start its own server.
temporal_only() {
  [ -n "${TEMPORAL_ADDRESS:-}" ] && return 0
  find_temporal >/dev/null 2>&1 && return 0
  [ -n "${TEMPORAL_CLI_PATH:-}" ] && return 0
  if is_root || usable_go >/dev/null; then
    log "first run: building the Temporal CLI (a few minutes, once)"
    build_temporal
  else
    log "the Temporal CLI is missing and there is no Go >= 1.21 to build it: install Go, or set TEMPORAL_ADDRESS"
  fi
}

main() {
  if [ "${1:-}" = "--temporal-only" ]; then temporal_only; return; fi
  local missing
  missing="$(missing_packages)"
  # Fetching Go needs a downloader and unzip; as root, add them to the same apt run.
  if is_root && temporal_needs_go_bootstrap; then
    { command -v curl || command -v wget; } >/dev/null 2>&1 || missing="${missing} ca-certificates curl"
    command -v unzip >/dev/null 2>&1 || missing="${missing} unzip"
  fi
  missing="${missing# }"
  if [ -n "$missing" ]; then
    if is_root; then
      log "installing: ${missing}"
      # shellcheck disable=SC2086 # word splitting intended: a list of package names
      apt_install $missing
    else
      log "missing Debian packages: ${missing}; install them with: sudo apt-get install ${missing}"
    fi
  fi

  if ! find_temporal >/dev/null 2>&1 && [ -z "${TEMPORAL_CLI_PATH:-}" ]; then
    if is_root || usable_go >/dev/null; then
      build_temporal
    else
      log "the Temporal CLI is missing and there is no Go >= 1.21 to build it: install Go, or run as root"
    fi
  fi

  if ! find_helm >/dev/null 2>&1; then
    if is_root || usable_go >/dev/null; then
      build_helm
    else
      log "Helm is missing and there is no Go >= 1.21 to build it: the chart test will fail"
    fi
  fi

  local summary=()
  status() { if [ -n "$2" ]; then summary+=("$1 ok"); else summary+=("$1 MISSING"); fi; }
  status postgres "$(find_postgres || true)"
  status mariadb "$(find_bin mariadbd mysqld || true)"
  status clickhouse "$(find_bin clickhouse-server clickhouse || true)"
  status chromium "$(find_bin /usr/bin/chromium || true)"
  status openssl "$(find_bin openssl || true)"
  status temporal "$(find_temporal 2>/dev/null || true)"
  status helm "$(find_helm 2>/dev/null || true)"
  local line
  printf -v line '%s, ' "${summary[@]}"
  log "${line%, }"
}

# Sourcing the file (for a test of the detection functions) defines them without running main.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then main "$@"; fi
