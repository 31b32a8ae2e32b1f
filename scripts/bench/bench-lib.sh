# Shared by the benchmark scripts (sourced, not run): a release build, a server on a temp data folder with an author
# and a reviewer, and a released package made through the management API, as a district would make one.
#
# The sourcing script sets `root`, `work` and `scratch` first and calls, in order:
#   bench_build                        release build of trail-companion (skipped with BENCH_SKIP_BUILD=1, or BENCH_BIN
#                                      naming a binary to measure, e.g. an older build kept for a before/after); sets `bin`
#   bench_start_server                 data folder, EICAR signature, accounts, tokens, `serve` (with BENCH_SERVE_FLAGS);
#                                      sets `base`, `data`,
#                                      `author`, `reviewer`, `admin`, `server_pid`
#   bench_tour NAME                    a tour with a frame; prints its id
#   bench_waypoint TOUR NAME LAT LON   prints the waypoint id
#   bench_upload TOUR WAYPOINT FILE MIME NAME   uploads (multipart), waits for the scan; prints the asset id
#   bench_release TOUR                 submit, build, approve, push; prints "packageId version sha256"
#   bench_deployed_nginx FOLDER PORT [SERVER_BLOCKS]
#                                      nginx running the project's deploy/nginx.conf (plain HTTP on PORT) in front of
#                                      the server, plus SERVER_BLOCKS (e.g. a static reference); sets `nginx_pid`
# and its own `cleanup` (which should call bench_stop_server, and bench_stop_nginx when it started nginx).

# shellcheck source=bench-result.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-result.sh"

bench_free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }
bench_now() { date +%s.%N; }
bench_elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
api() { local token="$1"; shift; curl -sS --fail-with-body -H "Authorization: Bearer $token" -H 'Content-Type: application/json' "$@"; }
json() { python3 -c "import json, sys; print(json.load(sys.stdin)$1)"; }

bench_build() {
  if [[ -n "${BENCH_BIN:-}" ]]; then bin="$BENCH_BIN"; [[ -x "$bin" ]] || { echo "no binary at $bin" >&2; exit 1; }; return; fi
  if [[ "${BENCH_SKIP_BUILD:-0}" != 1 ]]; then
    echo "building (release) in $scratch ..."
    (cd "$root" && swift build -c release --product trail-companion --scratch-path "$scratch" 2>&1 | tail -2)
  fi
  bin="$(cd "$root" && swift build -c release --scratch-path "$scratch" --show-bin-path)/trail-companion"
  [[ -x "$bin" ]] || { echo "no binary at $bin" >&2; exit 1; }
}

bench_start_server() {
  data="$work/data"; local sigs="$work/signatures"
  mkdir -p "$data" "$sigs"
  local hex; hex=$(printf '%s' 'EICAR-STANDARD-ANTIVIRUS-TEST-FILE' | od -An -tx1 | tr -d ' \n')
  printf 'Trail.Test.EICAR:0:*:%s\n' "$hex" > "$sigs/trail-test-eicar.ndb"
  cli() { "$bin" "$@" --root "$root" --data "$data"; }
  cli user create --email author@trail.test --name Author --password 'bench password 1234' >/dev/null
  cli user create --email reviewer@trail.test --name Reviewer --password 'bench password 1234' >/dev/null
  cli user create --email admin@trail.test --name Admin --password 'bench password 1234' --admin >/dev/null
  cli site create --slug bench --name "Bench District" >/dev/null
  cli member add --site bench --email author@trail.test --role manager >/dev/null
  cli member add --site bench --email reviewer@trail.test --role reviewer >/dev/null
  author="$(cli token create --email author@trail.test | tail -1)"
  reviewer="$(cli token create --email reviewer@trail.test | tail -1)"
  admin="$(cli token create --email admin@trail.test | tail -1)"
  local port; port=$(bench_free_port)
  base="http://127.0.0.1:$port"
  # shellcheck disable=SC2086  # BENCH_SERVE_FLAGS: more `serve` flags, word-split on purpose
  "$bin" serve --hostname 127.0.0.1 --port "$port" --root "$root" --data "$data" --clamav-db "$sigs" ${BENCH_SERVE_FLAGS:-} > "$work/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 200); do curl -fsS "$base/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
  curl -fsS "$base/healthz" >/dev/null || { echo "server did not start:"; cat "$work/server.log"; exit 1; }
}

bench_stop_server() {
  if [[ -n "${server_pid:-}" ]] && kill -0 "$server_pid" 2>/dev/null; then kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; fi
}

bench_tour() {
  local tour
  tour=$(api "$author" -X POST "$base/api/v1/manage/tours" -d "{\"site\": \"bench\", \"name\": \"$1\", \"description\": \"A long walk.\"}" | json "['id']")
  api "$author" -X PATCH "$base/api/v1/manage/tours/$tour" -d '{"frame": {"north": 44.43, "south": 44.36, "east": -121.97, "west": -122.28}}' >/dev/null
  echo "$tour"
}

bench_waypoint() {
  api "$author" -X POST "$base/api/v1/manage/tours/$1/waypoints" \
    -d "{\"name\": \"$2\", \"latitude\": $3, \"longitude\": $4, \"description\": \"\"}" | json "['id']"
}

bench_upload() {
  local tour="$1" waypoint="$2" file="$3" mime="$4" name="$5" asset status=pending
  asset=$(curl -fsS -H "Authorization: Bearer $author" -H 'Expect:' -F "file=@$file;type=$mime;filename=$name" \
    "$base/api/v1/manage/tours/$tour/waypoints/$waypoint/assets" | json "['id']")
  for _ in $(seq 1 6000); do
    status=$(api "$author" "$base/api/v1/manage/assets/$asset" | json "['scanStatus']")
    [[ "$status" != pending ]] && break
    sleep 0.2
  done
  [[ "$status" == clean ]] || { echo "$name was not scanned clean ($status)" >&2; exit 1; }
  bench_describe "$asset" "$mime"
  echo "$asset"
}

# What a site that requires accessible media asks of each file before submission: captions for a video, a
# transcript for audio, alt text for an image. Waits for the companion file's scan.
bench_describe() {
  local asset="$1" mime="$2" companion="" status=pending
  case "$mime" in
    video/*)
      printf 'WEBVTT\n\n00:00.000 --> 00:05.000\nA walk by the lake.\n' > "$work/captions.vtt"
      companion=$(curl -fsS -H "Authorization: Bearer $author" -H 'Expect:' -F "file=@$work/captions.vtt;type=text/vtt;filename=captions.vtt" \
        "$base/api/v1/manage/assets/$asset/captions" | json "['id']") ;;
    audio/*)
      companion=$(api "$author" -X POST "$base/api/v1/manage/assets/$asset/transcript" -d '{"text": "A walk by the lake."}' | json "['id']") ;;
    image/*)
      api "$author" -X PATCH "$base/api/v1/manage/assets/$asset" -d '{"altText": "The lake at dawn."}' >/dev/null ;;
  esac
  [[ -z "$companion" ]] && return 0
  for _ in $(seq 1 600); do
    status=$(api "$author" "$base/api/v1/manage/assets/$companion" | json "['scanStatus']")
    [[ "$status" != pending ]] && break
    sleep 0.2
  done
  [[ "$status" == clean ]] || { echo "the captions or transcript of $asset were not scanned clean ($status)" >&2; exit 1; }
}

bench_release() {
  local tour="$1" request state=building pushed
  local answer; answer=$(api "$author" -X POST "$base/api/v1/manage/tours/$tour/publish") || { echo "the tour cannot be submitted: $answer" >&2; exit 1; }
  request=$(echo "$answer" | json "['requestId']")
  for _ in $(seq 1 6000); do
    state=$(api "$author" "$base/api/v1/manage/publish-requests/$request" | json "['state']")
    [[ "$state" != building ]] && break
    sleep 0.2
  done
  [[ "$state" == pending ]] || { echo "the build did not succeed ($state)" >&2; api "$author" "$base/api/v1/manage/publish-requests/$request" >&2; exit 1; }
  api "$reviewer" -X POST "$base/api/v1/manage/publish-requests/$request/approve" -d '{"comment": "ok"}' >/dev/null
  pushed=$(api "$author" -X POST "$base/api/v1/manage/publish-requests/$request/push")
  echo "$pushed" | python3 -c "import json, sys; p = json.load(sys.stdin); print(p['packageId'], p['version'], p['sha256'])"
}

# A plain-HTTP variant of deploy/nginx.conf, differing only in what a loopback run must change: the `listen` lines (PORT,
# no TLS), the certificate lines dropped, the redirect-only port-80 server dropped, the upstream's port, and the data
# and cache folders under FOLDER. Every location, limit, proxy_cache and X-Accel-Redirect rule is the deployed file's
# own. Wrapped in what Debian's /etc/nginx/nginx.conf sets around a site file, with SERVER_BLOCKS appended; started
# in the foreground (NGINX names another nginx binary). Needs `base` and `data` (bench_start_server).
nginx_pid=""
bench_deployed_nginx() {
  local conf="$1" port="$2" extra="${3:-}" nginx_bin="${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}"
  [[ -x "$nginx_bin" ]] || { echo "nginx is missing: apt-get install -y nginx-light" >&2; exit 2; }
  mkdir -p "$conf/cache"
  python3 - "$root/deploy/nginx.conf" "$conf/site.conf" "$port" "${base##*:}" "$data" "$conf/cache" <<'PY'
import sys
source, target, port, upstream, data, cache = sys.argv[1:]
text = open(source).read()
# The first server block only redirects port 80 to HTTPS: a loopback run has no use for it.
first = text.index("\nserver {")
second = text.index("\nserver {", first + 1)
text = text[:first] + text[second:]
lines = []
for line in text.splitlines():
    stripped = line.strip()
    if stripped.startswith("ssl_") or stripped.startswith("listen [::]"):
        continue
    if stripped.startswith("listen 443"):
        line = f"    listen 127.0.0.1:{port};"
    lines.append(line)
text = "\n".join(lines) + "\n"
text = text.replace("127.0.0.1:8080", f"127.0.0.1:{upstream}")
text = text.replace("/var/lib/trail-companion", data).replace("/var/cache/nginx/trail-companion", cache)
open(target, "w").write(text)
PY
  local user=""; [[ $EUID == 0 ]] && user="user root root;"
  cat > "$conf/nginx.conf" <<EOF
$user
worker_processes auto;
daemon off;
pid $conf/nginx.pid;
error_log $conf/error.log;
events { worker_connections 1024; }
http {
  include /etc/nginx/mime.types;
  default_type application/octet-stream;
  sendfile on;
  tcp_nopush on;
  access_log off;
  keepalive_requests 100000;
  client_body_temp_path $conf/body;
  proxy_temp_path $conf/proxy;
  fastcgi_temp_path $conf/fastcgi;
  uwsgi_temp_path $conf/uwsgi;
  scgi_temp_path $conf/scgi;
  include $conf/site.conf;
$extra
}
EOF
  "$nginx_bin" -t -c "$conf/nginx.conf" -p "$conf" > "$conf/test.log" 2>&1 || { cat "$conf/test.log"; exit 1; }
  "$nginx_bin" -c "$conf/nginx.conf" -p "$conf" > "$conf/stdout.log" 2>&1 &
  nginx_pid=$!
  for _ in $(seq 1 100); do curl -fsS -o /dev/null "http://127.0.0.1:$port/healthz" 2>/dev/null && return 0; sleep 0.1; done
  echo "nginx did not pass /healthz on:"; tail -5 "$conf/error.log"; exit 1
}

bench_stop_nginx() {
  if [[ -n "${nginx_pid:-}" ]] && kill -0 "$nginx_pid" 2>/dev/null; then kill "$nginx_pid"; wait "$nginx_pid" 2>/dev/null || true; fi
}
