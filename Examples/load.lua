-- The load Examples/run.sh drives the movie server with (wrk -s load.lua): a quarter of the
-- requests add a movie (POST /movies), the rest read lists and counts with predicates, sorts
-- and limits. At the end it prints one RESULT line that run.sh reads.

local directors = {
  "Michael Mann", "Kathryn Bigelow", "Denis Villeneuve", "Agnes Varda",
  "Akira Kurosawa", "Celine Sciamma", "Bong Joon-ho", "Jane Campion",
}

local reads = {
  "/movies?limit=20&sort=-year",
  "/movies?where=rating%20%3E%3D%208&sort=-rating&limit=10",
  "/movies/count?where=year%20%3C%202000",
  "/movies?where=director.name%20%3D%3D%20%27Michael%20Mann%27&sort=title&limit=10",
}

local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("thread_number", #threads)
end

function init(args)
  math.randomseed(os.time() * 1000 + thread_number)
  sent = 0
  creates = 0
end

function request()
  sent = sent + 1
  if sent % 4 == 1 then
    creates = creates + 1
    local body = string.format(
      '{"title":"wrk-%d-%d","year":%d,"rating":%.1f,"director":"%s"}',
      thread_number, creates, math.random(1950, 2025), math.random(0, 100) / 10,
      directors[math.random(#directors)])
    return wrk.format("POST", "/movies", { ["Content-Type"] = "application/json" }, body)
  end
  return wrk.format("GET", reads[math.random(#reads)])
end

function done(summary, latency, requests)
  local created = 0
  for _, thread in ipairs(threads) do
    created = created + (thread:get("creates") or 0)
  end
  local errors = summary.errors
  io.write(string.format(
    "RESULT requests=%d duration_us=%d creates_sent=%d p50_us=%d p90_us=%d p99_us=%d max_us=%d connect=%d read=%d write=%d timeout=%d status=%d\n",
    summary.requests, summary.duration, created,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    errors.connect, errors.read, errors.write, errors.timeout, errors.status))
end
