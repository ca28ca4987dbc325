// simdjson_decode.cpp - a decode-only baseline for the load: how long does
// simdjson's On-Demand API take just to decode every record of a dump,
// keeping nothing?  (bench/README.md, "A decode-only baseline".)
//
//   build/bench/simdjson_decode DUMP [THREADS] [RUNS]
//
// The file is cut into THREADS parts at line boundaries; each thread reads
// its part with pread() in 1 MiB blocks (plus the rest of the last line),
// as the load's block mode does, and decodes each block's lines as a
// document stream (iterate_many), visiting every field: strings are
// unescaped, numbers converted, arrays walked.  Prints the best of RUNS:
// seconds, records, fields, and MB/s (10^6 bytes).  Built only where meson
// finds simdjson (Debian's libsimdjson-dev).
#include <simdjson.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace simdjson;

namespace {

const size_t BLOCK = size_t(1) << 20;

struct counts {
    uint64_t records = 0, fields = 0, sink = 0;
};

void visit(ondemand::value v, counts &c);

void
visit_array(ondemand::array a, counts &c)
{
    for (auto e : a) {
        ondemand::value v;
        if (e.get(v) == SUCCESS)
            visit(v, c);
    }
}

void
visit(ondemand::value v, counts &c)
{
    ondemand::json_type t;
    if (v.type().get(t) != SUCCESS)
        return;
    switch (t) {
    case ondemand::json_type::string: {
        std::string_view s;
        if (v.get_string().get(s) == SUCCESS)
            c.sink += s.size();
        break;
    }
    case ondemand::json_type::number: {
        uint64_t u;
        if (v.get_uint64().get(u) == SUCCESS) {
            c.sink += u;
        } else {
            double d;
            if (v.get_double().get(d) == SUCCESS)
                c.sink += uint64_t(d);
        }
        break;
    }
    case ondemand::json_type::array: {
        ondemand::array a;
        if (v.get_array().get(a) == SUCCESS)
            visit_array(a, c);
        break;
    }
    case ondemand::json_type::object: {
        ondemand::object o;
        if (v.get_object().get(o) == SUCCESS)
            for (auto f : o) {
                ondemand::value fv;
                if (f.value().get(fv) == SUCCESS)
                    visit(fv, c);
            }
        break;
    }
    case ondemand::json_type::boolean: {
        bool b;
        if (v.get_bool().get(b) == SUCCESS)
            c.sink += b;
        break;
    }
    default:
        break;
    }
}

// Decode the lines that start in [from, to) of the file.
void
decode_part(int fd, uint64_t from, uint64_t to, uint64_t fsize, counts &c)
{
    ondemand::parser parser;
    std::vector<uint8_t> buf(BLOCK * 2 + SIMDJSON_PADDING);
    uint64_t pos = from;
    if (from > 0) { // skip to the first line that starts at or after `from`
        uint8_t ch;
        if (pread(fd, &ch, 1, from - 1) == 1 && ch != '\n') {
            for (;;) {
                ssize_t got = pread(fd, buf.data(), 4096, pos);
                if (got <= 0)
                    return;
                void *nl = memchr(buf.data(), '\n', size_t(got));
                if (nl) {
                    pos += uint64_t(static_cast<uint8_t *>(nl) - buf.data()) + 1;
                    break;
                }
                pos += uint64_t(got);
            }
        }
    }
    while (pos < to) {
        // a block of whole lines, cut after the line holding byte to - 1
        size_t len = 0, want = size_t(std::min<uint64_t>(BLOCK, fsize - pos));
        for (;;) {
            if (len + want + SIMDJSON_PADDING > buf.size())
                buf.resize(len + want + SIMDJSON_PADDING);
            ssize_t got = pread(fd, buf.data() + len, want, pos + len);
            if (got <= 0)
                break;
            size_t was = len;
            len += size_t(got);
            if (pos + len >= fsize)
                break;
            size_t from = pos + was >= to ? was : std::max(was, size_t(to - 1 - pos));
            if (pos + len > to) { // the part ends in here: stop after that line
                const void *nl = memchr(buf.data() + from, '\n', len - from);
                if (nl) {
                    len = size_t(static_cast<const uint8_t *>(nl) - buf.data()) + 1;
                    break;
                }
            } else {
                const void *nl = memrchr(buf.data() + was, '\n', len - was);
                if (nl) {
                    len = size_t(static_cast<const uint8_t *>(nl) - buf.data()) + 1;
                    break;
                }
            }
            want = 64 << 10; // a line longer than what we have: read on
        }
        if (len == 0)
            break;
        ondemand::document_stream docs;
        if (parser.iterate_many(buf.data(), len, std::max<size_t>(len, 1 << 16)).get(docs) != SUCCESS)
            break;
        for (auto doc : docs) {
            ondemand::object o;
            if (doc.get_object().get(o) != SUCCESS)
                continue;
            c.records++;
            for (auto f : o) {
                ondemand::value fv;
                c.fields++;
                if (f.value().get(fv) == SUCCESS)
                    visit(fv, c);
            }
        }
        pos += len;
    }
}

} // namespace

int
main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s DUMP [THREADS] [RUNS]\n", argv[0]);
        return 2;
    }
    int threads = argc > 2 ? atoi(argv[2]) : 2, runs = argc > 3 ? atoi(argv[3]) : 3;
    threads = std::max(1, std::min(threads, 64));
    int fd = open(argv[1], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        perror(argv[1]);
        return 1;
    }
    uint64_t fsize = uint64_t(st.st_size);
    double best = 1e30;
    counts total;
    for (int r = 0; r < std::max(1, runs); r++) {
        std::vector<counts> c(static_cast<size_t>(threads));
        auto t0 = std::chrono::steady_clock::now();
        std::vector<std::thread> th;
        for (int i = 0; i < threads; i++)
            th.emplace_back([&, i] {
                decode_part(fd, fsize * uint64_t(i) / uint64_t(threads),
                            fsize * uint64_t(i + 1) / uint64_t(threads), fsize, c[size_t(i)]);
            });
        for (auto &t : th)
            t.join();
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        best = std::min(best, s);
        total = counts();
        for (auto &x : c) {
            total.records += x.records;
            total.fields += x.fields;
            total.sink += x.sink;
        }
    }
    printf("simdjson On-Demand, %d threads: best of %d %.3f s, %llu records, %llu fields, "
           "%.0f MB/s (check %llu)\n", threads, runs, best, (unsigned long long)total.records,
           (unsigned long long)total.fields, double(fsize) / 1e6 / best,
           (unsigned long long)(total.sink & 0xffff));
    return 0;
}
