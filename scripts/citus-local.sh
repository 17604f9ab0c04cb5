#!/usr/bin/env bash
# A Citus cluster on this machine: a coordinator and two workers on loopback ports, built from
# Citus's and pgvector's public sources against Debian's PostgreSQL 15 (docs/SCALING.md, "A Citus
# cluster on one machine"). For trying and measuring the engine past one node; not for
# production (every node trusts any local connection).
#
#   scripts/citus-local.sh build CITUS_SRC PGVECTOR_SRC    compile both, install them into the server's tree
#   scripts/citus-local.sh start [CITUS_SRC PGVECTOR_SRC]  build first if either is not installed; start
#                                                          the three nodes; create the database
#   scripts/citus-local.sh createdb NAME                   one more database, a cluster of its own
#   scripts/citus-local.sh url [NAME]                      the coordinator's DATABASE_URL
#   scripts/citus-local.sh status                          the nodes and the workers the coordinator knows
#   scripts/citus-local.sh stop
#
# What it needs (Debian 12; as root, or as a user that may write the server's tree to build):
#   packages  postgresql-15, postgresql-server-dev-15 at the server's own version (the headers
#             must match it), liblz4-dev, libzstd-dev, libkrb5-dev, gcc, make
#   sources   Citus 13.2 (tag v13.2.2, a release for PostgreSQL 15 to 17; Citus 14 has no 15) and
#             pgvector 0.8.5 (tag v0.8.5, the version the embedded server ships), each an
#             unpacked release archive or checkout
#   server    PostgreSQL 15.0 to 15.19 (run on 15.18). Citus 13.2.2 does not compile against
#             15.20 or later: from 15.20 the server's commands/dbcommands.h declares
#             have_createdb_privilege(), which Citus defines again for PostgreSQL 15 ("static
#             declaration of 'have_createdb_privilege' follows non-static declaration"), and
#             build stops before compiling. On Debian 12, whose security updates bring 15.20, pin
#             the three packages at 15.18 (apt-cache madison postgresql-15 lists those on offer):
#               apt-get install --allow-downgrades postgresql-15=15.18-0+deb12u1 \
#                   postgresql-client-15=15.18-0+deb12u1 postgresql-server-dev-15=15.18-0+deb12u1
#               apt-mark hold postgresql-15 postgresql-client-15 postgresql-server-dev-15
#             or rename Citus's own copy in its source (untried on 15.20; docs/SCALING.md):
#               sed -i 's/^have_createdb_privilege(void)$/#define have_createdb_privilege citus_have_createdb_privilege\nhave_createdb_privilege(void)/' \
#                   CITUS_SRC/src/include/pg_version_compat.h
# Settings (environment):
#   MM_CITUS_DIR     where the nodes keep their data and logs (default: /tmp/mm-citus)
#   MM_CITUS_PORT    the coordinator's port; the workers take the next two (default: 9700)
#   MM_CITUS_SHARDS  shards of each distributed table (default: 8)
#   MM_CITUS_DB      the database start creates (default: meaning_memory)
#   PG_CONFIG        the server's pg_config (default: /usr/lib/postgresql/15/bin/pg_config)
#   MM_CITUS_SKIP_CHECK  1: build without the check above (a Citus source it misjudges)
set -euo pipefail

PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
DIR=${MM_CITUS_DIR:-/tmp/mm-citus}
PORT=${MM_CITUS_PORT:-9700}
SHARDS=${MM_CITUS_SHARDS:-8}
DB=${MM_CITUS_DB:-meaning_memory}
NODES=(coordinator worker1 worker2)
# Each node as the engine sets up its embedded server (meaning_memory/embedded_setup.py): random
# reads about as cheap as sequential ones, and an HNSW index's graph built in memory.
NODE_SETTINGS="-c shared_buffers=1GB -c random_page_cost=1.1 -c maintenance_work_mem=1GB"

die() { echo "citus-local: $*" >&2; exit 2; }

BIN="" LIB=""
need_server() {  # the server's programs and library directory, from its pg_config
    [ -x "$PG_CONFIG" ] || die "no pg_config at $PG_CONFIG: install postgresql-server-dev-15 (or set PG_CONFIG)"
    BIN=$("$PG_CONFIG" --bindir)
    LIB=$("$PG_CONFIG" --pkglibdir)
}

# initdb and pg_ctl refuse to run as root: as root the nodes run as the postgres user.
as_owner() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

port_of() { echo $((PORT + $1)); }

psql_at() {  # psql_at NODE_INDEX DATABASE SQL...
    local port db
    port=$(port_of "$1"); db=$2; shift 2
    local args=()
    for sql in "$@"; do args+=(-c "$sql"); done
    "$BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres -d "$db" "${args[@]}"
}

value_at() {  # value_at NODE_INDEX DATABASE SQL: the one value the query returns
    "$BIN/psql" -X -tA -h 127.0.0.1 -p "$(port_of "$1")" -U postgres -d "$2" -c "$3"
}

installed() { [ -f "$LIB/citus.so" ] && [ -f "$LIB/vector.so" ]; }

# Before compiling: the server and its headers of one version, and one Citus compiles against.
# Citus 13.2.2 defines its own have_createdb_privilege() for PostgreSQL 15 (static, in
# src/include/pg_version_compat.h); from 15.20 the server's commands/dbcommands.h declares one
# too, and the compiler stops: "static declaration of 'have_createdb_privilege' follows
# non-static declaration". A source renamed as in the header above passes.
check_server() {  # check_server CITUS_SRC
    local citus=$1 said include num headers server compat version
    said=$("$PG_CONFIG" --version)
    [ -x "$BIN/postgres" ] || die "no server at $BIN/postgres: install postgresql-15"
    server=$("$BIN/postgres" --version | sed -n 's/^postgres (PostgreSQL) \([0-9][0-9.]*\).*/\1/p')
    include=$("$PG_CONFIG" --includedir-server)
    [ -f "$include/pg_config.h" ] ||
        die "no server headers in $include: install postgresql-server-dev-15 at the server's version ($server)"
    num=$(sed -n 's/^#define PG_VERSION_NUM \([0-9]*\)$/\1/p' "$include/pg_config.h")
    headers=$((num / 10000)).$((num % 10000))
    [[ ! $server =~ ^[0-9]+\.[0-9]+$ ]] || [ "$headers" = "$server" ] ||
        die "the server is PostgreSQL $server but its headers are $headers: install postgresql-15 and postgresql-server-dev-15 of one version (docs/SCALING.md, \"A Citus cluster on one machine\")"
    [ "${MM_CITUS_SKIP_CHECK:-}" = 1 ] && return 0
    compat=$citus/src/include/pg_version_compat.h
    version=$(sed -n "s/^PACKAGE_VERSION='\(.*\)'$/\1/p" "$citus/configure")
    if [ $((num / 10000)) = 15 ] &&
        { [ $((num % 10000)) -ge 20 ] || grep -q 'have_createdb_privilege' "$include/commands/dbcommands.h" 2>/dev/null; } &&
        grep -q '^have_createdb_privilege(void)' "$compat" 2>/dev/null &&
        ! grep -q 'define have_createdb_privilege citus_have_createdb_privilege' "$compat"; then
        die "Citus ${version:-in $citus} does not compile against $said:
  from 15.20 the server declares have_createdb_privilege(), which Citus defines again for
  PostgreSQL 15 (\"static declaration of 'have_createdb_privilege' follows non-static
  declaration\"). Citus 13.2.2 builds against 15.0 to 15.19. On Debian 12, pin 15.18:
    apt-get install --allow-downgrades postgresql-15=15.18-0+deb12u1 postgresql-client-15=15.18-0+deb12u1 postgresql-server-dev-15=15.18-0+deb12u1
    apt-mark hold postgresql-15 postgresql-client-15 postgresql-server-dev-15
  or rename Citus's copy in $compat (docs/SCALING.md, \"A Citus cluster on one machine\")"
    fi
}

build() {
    [ $# -eq 2 ] || die "build needs CITUS_SRC PGVECTOR_SRC"
    local citus=$1 vector=$2 jobs
    [ -f "$citus/configure" ] || die "$citus holds no Citus source (no configure)"
    [ -f "$vector/vector.control" ] || die "$vector holds no pgvector source (no vector.control)"
    need_server
    check_server "$citus"
    jobs=$(nproc)
    # Citus: the server's own compiler flags (generic x86-64 on Debian); no bitcode for the
    # server's JIT (with_llvm=no: it would need clang); no libcurl (anonymous statistics only).
    if [ ! -f "$citus/Makefile.global" ]; then
        (cd "$citus" && ./configure PG_CONFIG="$PG_CONFIG" --without-libcurl)
    fi
    make -C "$citus" -j"$jobs" with_llvm=no
    make -C "$citus" install with_llvm=no
    # pgvector: OPTFLAGS="" or its Makefile compiles for this machine's CPU (-march=native),
    # and the library then crashes on a CPU without the instructions it chose. It picks its
    # faster routines at run time either way.
    make -C "$vector" clean PG_CONFIG="$PG_CONFIG" >/dev/null
    make -C "$vector" -j"$jobs" PG_CONFIG="$PG_CONFIG" OPTFLAGS="" with_llvm=no
    make -C "$vector" install PG_CONFIG="$PG_CONFIG" OPTFLAGS="" with_llvm=no
    installed || die "built, but $LIB holds no citus.so or vector.so"
}

init_node() {  # init_node INDEX NAME
    local data=$DIR/$2
    [ -f "$data/PG_VERSION" ] && return 0
    as_owner "$BIN/initdb" -D "$data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
    cat >>"$data/postgresql.conf" <<EOF
port = $(port_of "$1")
listen_addresses = '127.0.0.1'
unix_socket_directories = '$DIR'
shared_preload_libraries = 'citus'
max_connections = 200
wal_level = logical
citus.shard_count = $SHARDS
EOF
}

valid_name() {
    [[ $1 =~ ^[a-z_][a-z0-9_]{0,62}$ ]] || die "a database name is lower-case letters, digits and _ (at most 63), not '$1'"
}

create_database() {  # create_database NAME: on every node, then one Citus cluster of them
    local name=$1 index exists
    valid_name "$name"
    for index in 0 1 2; do
        exists=$(value_at "$index" postgres "SELECT 1 FROM pg_database WHERE datname = '$name'")
        [ "$exists" = 1 ] && continue
        psql_at "$index" postgres "CREATE DATABASE $name"
        psql_at "$index" "$name" "CREATE EXTENSION citus"
    done
    if [ "$(value_at 0 "$name" "SELECT count(*) FROM pg_dist_node")" != 3 ]; then
        psql_at 0 "$name" "SELECT citus_set_coordinator_host('127.0.0.1', $PORT)" >/dev/null
        psql_at 0 "$name" "SELECT citus_add_node('127.0.0.1', $(port_of 1))" >/dev/null
        psql_at 0 "$name" "SELECT citus_add_node('127.0.0.1', $(port_of 2))" >/dev/null
    fi
    # Created on the coordinator once the workers are in: Citus creates it on each of them.
    psql_at 0 "$name" "CREATE EXTENSION IF NOT EXISTS vector"
}

start() {
    if ! installed; then
        [ $# -eq 2 ] || die "Citus or pgvector is not installed in $LIB: start CITUS_SRC PGVECTOR_SRC builds them"
        build "$1" "$2"
    fi
    mkdir -p "$DIR"
    [ "$(id -u)" = 0 ] && chown postgres: "$DIR"
    local index
    for index in 0 1 2; do
        init_node "$index" "${NODES[$index]}"
        if ! as_owner "$BIN/pg_ctl" -D "$DIR/${NODES[$index]}" status >/dev/null 2>&1; then
            as_owner "$BIN/pg_ctl" -D "$DIR/${NODES[$index]}" -l "$DIR/${NODES[$index]}.log" \
                -o "$NODE_SETTINGS" -w start >/dev/null
        fi
    done
    create_database "$DB"
    echo "citus-local: coordinator 127.0.0.1:$PORT, workers :$(port_of 1) and :$(port_of 2); data in $DIR"
    echo "DATABASE_URL=$(url "$DB")"
}

stop() {
    local index
    for index in 2 1 0; do
        [ -f "$DIR/${NODES[$index]}/PG_VERSION" ] || continue
        as_owner "$BIN/pg_ctl" -D "$DIR/${NODES[$index]}" -m fast stop >/dev/null 2>&1 || true
    done
    echo "citus-local: stopped"
}

url() { echo "postgres://postgres@127.0.0.1:$PORT/${1:-$DB}"; }

status() {
    local index
    for index in 0 1 2; do
        if as_owner "$BIN/pg_ctl" -D "$DIR/${NODES[$index]}" status >/dev/null 2>&1; then
            echo "${NODES[$index]} :$(port_of $index) running"
        else
            echo "${NODES[$index]} :$(port_of $index) stopped"
        fi
    done
    psql_at 0 "$DB" "SELECT nodename || ':' || nodeport AS node, noderole FROM pg_dist_node ORDER BY nodeport" 2>/dev/null || true
}

command=${1:-}
[ $# -gt 0 ] && shift
case "$command" in
    build) build "$@" ;;
    start) need_server; start "$@" ;;
    createdb)
        [ $# -eq 1 ] || die "createdb needs NAME"
        valid_name "$1"
        need_server
        create_database "$1"
        url "$1"
        ;;
    url) url "$@" ;;
    status) need_server; status ;;
    stop) need_server; stop ;;
    *) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
       [ -z "$command" ] || exit 2 ;;
esac
