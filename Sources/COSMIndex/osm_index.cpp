// The one pass over an OpenStreetMap extract that the drawn map needs: libosmium reads the file (PBF blocks decoded
// on a thread pool), keeps every node's location, and hands each way, tagged node and multipolygon that a walker's
// map shows to `Collector`, which files it under every grid cell its bounding box touches. A build then reads only the
// cells of its frame. Written in C++ because libosmium is C++ and the point is speed: a state's extract is hundreds
// of megabytes, and an index that took minutes would hold the first build of the day.

#include "osm_index.h"

#include <osmium/area/assembler.hpp>
#include <osmium/handler.hpp>
#include <osmium/handler/node_locations_for_ways.hpp>
#include <osmium/index/map.hpp>
#include <osmium/index/map/dummy.hpp>
#include <osmium/io/any_input.hpp>
#include <osmium/builder/osm_object_builder.hpp>
#include <osmium/visitor.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

// Kinds, as the Swift reader names them (OSMFeature.Kind's raw values).
enum Kind : uint8_t {
    road = 1, path = 2, water = 3, stream = 4, wood = 5, building = 6,
    peak = 7, viewpoint = 8, parking = 9, toilets = 10, shelter = 11,
};
enum Geometry : uint8_t { point = 1, line = 2, polygon = 3 };

bool is_one_of(const char *value, std::initializer_list<const char *> list) {
    if (!value) return false;
    for (const char *item : list) {
        if (!std::strcmp(value, item)) return true;
    }
    return false;
}

/// What the map draws of an object's tags: its kind and class, or 0 when it draws nothing of it.
struct Classified {
    uint8_t kind = 0;
    const char *cls = "";
};

Classified classify(const osmium::TagList &tags, bool closed) {
    const char *highway = tags["highway"];
    if (highway) {
        if (is_one_of(highway, {"motorway", "trunk", "primary", "secondary", "tertiary", "unclassified", "residential",
                                "service", "living_street", "road", "motorway_link", "trunk_link", "primary_link",
                                "secondary_link", "tertiary_link"}))
            return {road, highway};
        if (is_one_of(highway, {"track", "path", "footway", "bridleway", "steps", "cycleway", "pedestrian"}))
            return {path, highway};
    }
    const char *waterway = tags["waterway"];
    if (waterway) {
        if (is_one_of(waterway, {"river", "stream", "canal", "ditch", "drain"})) return {stream, waterway};
        if (closed && !std::strcmp(waterway, "riverbank")) return {water, "riverbank"};
    }
    const char *natural = tags["natural"];
    const char *landuse = tags["landuse"];
    const char *amenity = tags["amenity"];
    if (closed) {
        if (is_one_of(natural, {"water"}) || is_one_of(landuse, {"reservoir", "basin"})) return {water, natural ? natural : landuse};
        if (is_one_of(natural, {"wood"}) || is_one_of(landuse, {"forest"})) return {wood, natural ? natural : landuse};
        if (tags["building"] && std::strcmp(tags["building"], "no")) return {building, ""};
    }
    if (is_one_of(natural, {"peak"})) return {peak, ""};
    if (is_one_of(tags["tourism"], {"viewpoint"})) return {viewpoint, ""};
    if (is_one_of(amenity, {"parking"})) return {parking, ""};
    if (is_one_of(amenity, {"toilets"})) return {toilets, ""};
    if (is_one_of(amenity, {"shelter"})) return {shelter, ""};
    return {};
}

bool is_point_kind(uint8_t kind) { return kind >= peak; }

/// The records, filed by cell; the names for the place search; the extent of what was kept.
class Collector {
public:
    explicit Collector(double cell_degrees) : cell(cell_degrees) {
        columns = static_cast<uint32_t>(std::ceil(360.0 / cell));
    }

    double cell;
    uint32_t columns;
    std::unordered_map<uint32_t, std::string> cells;
    std::string names;
    uint64_t features = 0;
    uint64_t named = 0;
    int32_t min_x = INT32_MAX, min_y = INT32_MAX, max_x = INT32_MIN, max_y = INT32_MIN;
    /// One record at a time, its memory kept from one feature to the next.
    std::string scratch;

    /// One feature: `rings` of (x, y) in 1e-7 degrees; for polygons each ring's count has its top bit set when it is
    /// an inner ring of the outer ring before it.
    void add(uint64_t id, Classified what, uint8_t geometry, const char *name, float elevation,
             const std::vector<std::vector<std::pair<int32_t, int32_t>>> &rings, const std::vector<bool> &inner) {
        int32_t x0 = INT32_MAX, y0 = INT32_MAX, x1 = INT32_MIN, y1 = INT32_MIN;
        for (const auto &ring : rings) {
            for (const auto &p : ring) {
                x0 = std::min(x0, p.first);
                y0 = std::min(y0, p.second);
                x1 = std::max(x1, p.first);
                y1 = std::max(y1, p.second);
            }
        }
        if (x0 > x1) return;
        std::string &record = scratch;
        record.clear();
        const size_t name_length = name ? std::min<size_t>(std::strlen(name), 255) : 0;
        const size_t class_length = std::min<size_t>(std::strlen(what.cls), 255);
        put<uint8_t>(record, what.kind);
        put<uint8_t>(record, geometry);
        put<uint8_t>(record, static_cast<uint8_t>(name_length));
        put<uint8_t>(record, static_cast<uint8_t>(class_length));
        record.append(name ? name : "", name_length);
        record.append(what.cls, class_length);
        put<float>(record, elevation);
        put<uint64_t>(record, id);
        put<int32_t>(record, x0);
        put<int32_t>(record, y0);
        put<int32_t>(record, x1);
        put<int32_t>(record, y1);
        put<uint32_t>(record, static_cast<uint32_t>(rings.size()));
        for (size_t r = 0; r < rings.size(); ++r) {
            uint32_t count = static_cast<uint32_t>(rings[r].size());
            if (inner[r]) count |= 0x80000000u;
            put<uint32_t>(record, count);
            record.append(reinterpret_cast<const char *>(rings[r].data()), rings[r].size() * 8);
        }
        const uint32_t c0 = column(x0), c1 = column(x1), r0 = row(y0), r1 = row(y1);
        for (uint32_t r = r0; r <= r1; ++r) {
            for (uint32_t c = c0; c <= c1; ++c) cells[r * columns + c].append(record);
        }
        ++features;
        min_x = std::min(min_x, x0);
        min_y = std::min(min_y, y0);
        max_x = std::max(max_x, x1);
        max_y = std::max(max_y, y1);
        if (name_length > 0) {
            // kind, longitude and latitude of the middle, name: one line for the place search.
            char line[96];
            std::snprintf(line, sizeof line, "%u\t%.6f\t%.6f\t", what.kind, (x0 + (double)(x1 - x0) / 2) / 1e7,
                          (y0 + (double)(y1 - y0) / 2) / 1e7);
            names.append(line);
            for (size_t i = 0; i < name_length; ++i) {
                const char ch = name[i];
                names.push_back(ch == '\t' || ch == '\n' || ch == '\r' ? ' ' : ch);
            }
            names.push_back('\n');
            ++named;
        }
    }

private:
    template <typename T> static void put(std::string &out, T value) {
        out.append(reinterpret_cast<const char *>(&value), sizeof(T));
    }
    uint32_t column(int32_t x) const {
        const double c = std::floor((x / 1e7 + 180.0) / cell);
        return static_cast<uint32_t>(std::clamp(c, 0.0, (double)columns - 1));
    }
    uint32_t row(int32_t y) const {
        const double r = std::floor((y / 1e7 + 90.0) / cell);
        return static_cast<uint32_t>(std::clamp(r, 0.0, std::ceil(180.0 / cell) - 1));
    }
};

float elevation_of(const osmium::TagList &tags) {
    const char *ele = tags["ele"];
    if (!ele) return NAN;
    char *end = nullptr;
    const double value = std::strtod(ele, &end);
    return end != ele && std::isfinite(value) ? static_cast<float>(value) : NAN;
}

std::pair<int32_t, int32_t> xy(const osmium::Location &location) { return {location.x(), location.y()}; }

/// Every node's location by id, for `NodeLocationsForWays`: ids and locations in two sorted arrays, with the first id
/// of every block of 128 in a small table that stays in the cache. osmium's `FlexMem` keeps a state extract (tens of
/// millions of nodes with ids up to ten billion) as one sorted array of pairs and binary-searches all of it for each
/// of a way's nodes: a cache miss a step, the largest part of the pass. A way's nodes are mostly created one after
/// the other, so the entry after the last one found is tried first. `NodeLocationsForWays` calls `sort` before the
/// first way only when the nodes came out of order; in order, the table is kept as they are set.
class Locations final : public osmium::index::map::Map<osmium::unsigned_object_id_type, osmium::Location> {
public:
    void set(const osmium::unsigned_object_id_type id, const osmium::Location location) final {
        if (!ids.empty() && id <= ids.back()) sorted = false;
        if (ids.size() % block == 0) firsts.push_back(id);
        ids.push_back(id);
        locations.push_back(location);
    }

    void sort() final {
        if (!sorted) {
            std::vector<std::pair<osmium::unsigned_object_id_type, osmium::Location>> entries;
            entries.reserve(ids.size());
            for (size_t i = 0; i < ids.size(); ++i) entries.emplace_back(ids[i], locations[i]);
            std::sort(entries.begin(), entries.end(),
                             [](const auto &a, const auto &b) { return a.first < b.first; });
            for (size_t i = 0; i < entries.size(); ++i) {
                ids[i] = entries[i].first;
                locations[i] = entries[i].second;
            }
            sorted = true;
        }
        firsts.clear();
        for (size_t i = 0; i < ids.size(); i += block) firsts.push_back(ids[i]);
    }

    osmium::Location get(const osmium::unsigned_object_id_type id) const final {
        const osmium::Location location = get_noexcept(id);
        if (!location.valid()) throw osmium::not_found{id};
        return location;
    }

    osmium::Location get_noexcept(const osmium::unsigned_object_id_type id) const noexcept final {
        const size_t next = last + 1;
        if (next < ids.size() && ids[next] == id) return locations[last = next];
        const auto after = std::upper_bound(firsts.begin(), firsts.end(), id);
        if (after == firsts.begin()) return osmium::Location{};
        const size_t from = static_cast<size_t>(after - firsts.begin() - 1) * block;
        const size_t to = std::min(from + block, ids.size());
        const auto found = std::lower_bound(ids.begin() + static_cast<std::ptrdiff_t>(from),
                                            ids.begin() + static_cast<std::ptrdiff_t>(to), id);
        if (found == ids.begin() + static_cast<std::ptrdiff_t>(to) || *found != id) return osmium::Location{};
        last = static_cast<size_t>(found - ids.begin());
        return locations[last];
    }

    std::size_t size() const final { return ids.size(); }

    std::size_t used_memory() const final {
        return ids.capacity() * sizeof(osmium::unsigned_object_id_type) + locations.capacity() * sizeof(osmium::Location) +
               firsts.capacity() * sizeof(osmium::unsigned_object_id_type);
    }

    void clear() final {
        ids.clear();
        locations.clear();
        firsts.clear();
        sorted = true;
    }

private:
    static constexpr size_t block = 128;
    std::vector<osmium::unsigned_object_id_type> ids;
    std::vector<osmium::Location> locations;
    std::vector<osmium::unsigned_object_id_type> firsts;
    bool sorted = true;
    mutable size_t last = 0;
};

class MapHandler : public osmium::handler::Handler {
public:
    explicit MapHandler(Collector &collector) : collector(collector), rings(1), inner(1, false) {}
    Collector &collector;
    uint64_t nodes = 0, ways = 0, relations = 0;
    // A way's points, kept from one way to the next: millions of ways, no allocation each.
    std::vector<std::vector<std::pair<int32_t, int32_t>>> rings;
    std::vector<bool> inner;

    void node(const osmium::Node &node) {
        ++nodes;
        if (node.tags().empty()) return;
        const Classified what = classify(node.tags(), false);
        if (!what.kind || !is_point_kind(what.kind) || !node.location().valid()) return;
        collector.add(static_cast<uint64_t>(node.id()) << 2, what, point, node.tags()["name"], elevation_of(node.tags()),
                      {{xy(node.location())}}, {false});
    }

    void way(const osmium::Way &way) {
        ++ways;
        if (way.tags().empty() || way.nodes().size() < 2) return;
        const bool closed = way.nodes().size() >= 4 && way.nodes().front().ref() == way.nodes().back().ref();
        const Classified what = classify(way.tags(), closed);
        if (!what.kind) return;
        rings.resize(1);
        inner.assign(1, false);
        auto &points = rings[0];
        points.clear();
        for (const auto &ref : way.nodes()) {
            if (!ref.location().valid()) return;  // a way reaching outside the extract: its clipped part is not known
            points.push_back(xy(ref.location()));
        }
        const uint64_t id = (static_cast<uint64_t>(way.id()) << 2) | 1;
        if (is_point_kind(what.kind)) {
            // A toilet drawn as a building outline: the map shows its symbol at the middle.
            int64_t sx = 0, sy = 0;
            for (const auto &p : points) { sx += p.first; sy += p.second; }
            collector.add(id, what, point, way.tags()["name"], elevation_of(way.tags()),
                          {{{static_cast<int32_t>(sx / (int64_t)points.size()), static_cast<int32_t>(sy / (int64_t)points.size())}}}, {false});
            return;
        }
        const bool area = what.kind == water || what.kind == wood || what.kind == building;
        collector.add(id, what, area ? polygon : line, way.tags()["name"], NAN, rings, inner);
    }

    void relation(const osmium::Relation &) { ++relations; }

    /// A multipolygon relation, assembled: each outer ring followed by its inner rings.
    void area(const osmium::Area &area) {
        const Classified what = classify(area.tags(), true);
        if (!what.kind || is_point_kind(what.kind) || (what.kind != water && what.kind != wood && what.kind != building)) return;
        std::vector<std::vector<std::pair<int32_t, int32_t>>> rings;
        std::vector<bool> inner;
        for (const auto &outer : area.outer_rings()) {
            rings.emplace_back();
            for (const auto &nr : outer) rings.back().push_back(xy(nr.location()));
            inner.push_back(false);
            for (const auto &hole : area.inner_rings(outer)) {
                rings.emplace_back();
                for (const auto &nr : hole) rings.back().push_back(xy(nr.location()));
                inner.push_back(true);
            }
        }
        if (rings.empty()) return;
        collector.add((static_cast<uint64_t>(area.orig_id()) << 2) | 2, what, polygon, area.tags()["name"], NAN, rings, inner);
    }
};

/// Water and wood multipolygons, assembled after the one pass: every way's node ids are kept, packed, while the
/// file goes by, and the relations of interest are copied; at the end each is assembled from its member ways and the
/// node locations the pass stored anyway. A first pass over the relations alone (osmium's usual way) decompressed the
/// whole file a second time, a quarter of the indexing time, for relations that are a few hundred in a state.
class RelationAreas {
public:
    /// A way of the extract seen, as (id, offset) into `refs`: the count, then the node ids as zigzag deltas.
    void way(const osmium::Way &way) {
        if (way.nodes().size() < 2) return;
        index.emplace_back(way.id(), refs.size());
        put_varint(way.nodes().size());
        int64_t previous = 0;
        for (const auto &ref : way.nodes()) {
            const int64_t delta = ref.ref() - previous;
            put_varint((static_cast<uint64_t>(delta) << 1) ^ static_cast<uint64_t>(delta >> 63));
            previous = ref.ref();
        }
    }

    void relation(const osmium::Relation &relation) {
        const char *type = relation.tags()["type"];
        if (!type || std::strcmp(type, "multipolygon")) return;
        const Classified what = classify(relation.tags(), true);
        if (what.kind != water && what.kind != wood) return;
        relations.add_item(relation);
        relations.commit();
    }

    /// Assembles every relation whose member ways are all in the extract; `area` gets each one assembled.
    template <typename Locations, typename Handler> void assemble(const Locations &locations, Handler &&area) {
        if (relations.committed() == 0) return;
        std::sort(index.begin(), index.end());
        osmium::area::AssemblerConfig config;
        for (const auto &relation : relations.select<osmium::Relation>()) {
            osmium::memory::Buffer ways{4096, osmium::memory::Buffer::auto_grow::yes};
            bool complete = true;
            for (const auto &member : relation.members()) {
                if (member.type() != osmium::item_type::way) continue;
                const auto found = std::lower_bound(index.begin(), index.end(), std::make_pair(member.ref(), uint64_t{0}));
                if (found == index.end() || found->first != member.ref()) {
                    complete = false;  // a member outside the extract: left out, as osmium's own tools do
                    break;
                }
                {
                    osmium::builder::WayBuilder builder{ways};
                    builder.set_id(member.ref());
                    osmium::builder::WayNodeListBuilder nodes{builder};
                    size_t at = found->second;
                    const uint64_t count = get_varint(at);
                    int64_t id = 0;
                    for (uint64_t i = 0; i < count; ++i) {
                        const uint64_t zigzag = get_varint(at);
                        id += static_cast<int64_t>(zigzag >> 1) ^ -static_cast<int64_t>(zigzag & 1);
                        nodes.add_node_ref(id, locations.get_noexcept(static_cast<osmium::unsigned_object_id_type>(id)));
                    }
                }
                ways.commit();
            }
            if (!complete) continue;
            std::vector<const osmium::Way *> members;
            for (const auto &way : ways.select<osmium::Way>()) members.push_back(&way);
            osmium::memory::Buffer out{4096, osmium::memory::Buffer::auto_grow::yes};
            try {
                osmium::area::Assembler assembler{config};
                assembler(relation, members, out);
            } catch (const osmium::invalid_location &) {
                continue;  // a member's node outside the extract
            }
            for (const auto &assembled : out.select<osmium::Area>()) area(assembled);
        }
    }

private:
    std::vector<std::pair<osmium::object_id_type, uint64_t>> index;
    std::string refs;
    osmium::memory::Buffer relations{64 * 1024, osmium::memory::Buffer::auto_grow::yes};

    void put_varint(uint64_t value) {
        while (value >= 0x80) {
            refs.push_back(static_cast<char>((value & 0x7f) | 0x80));
            value >>= 7;
        }
        refs.push_back(static_cast<char>(value));
    }
    uint64_t get_varint(size_t &at) const {
        uint64_t value = 0;
        for (int shift = 0;; shift += 7) {
            const auto byte = static_cast<uint8_t>(refs[at++]);
            value |= static_cast<uint64_t>(byte & 0x7f) << shift;
            if (!(byte & 0x80)) return value;
        }
    }
};

/// Sends each way and relation to `RelationAreas` as the pass goes by.
class RelationWays : public osmium::handler::Handler {
public:
    explicit RelationWays(RelationAreas &areas) : areas(areas) {}
    RelationAreas &areas;
    void way(const osmium::Way &way) { areas.way(way); }
    void relation(const osmium::Relation &relation) { areas.relation(relation); }
};

bool write_file(const std::string &path, const std::string &bytes, std::string &error) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
        error = "cannot write " + path + ": " + std::strerror(errno);
        return false;
    }
    return true;
}

}  // namespace

extern "C" int trail_osm_index_build(const char *const *inputs, int input_count, const char *output_folder, double cell_degrees,
                                     trail_osm_index_stats *stats, char *error, size_t error_capacity) {
    std::string message;
    try {
        Collector collector(cell_degrees);
        MapHandler handler(collector);
        for (int i = 0; i < input_count; ++i) {
            const osmium::io::File file{inputs[i]};
            // Versions, timestamps and authors are most of an extract's bytes and the map needs none of them.
            RelationAreas relations;
            RelationWays relation_ways{relations};
            Locations index;
            osmium::handler::NodeLocationsForWays<Locations> locations{index};
            locations.ignore_errors();
            osmium::io::Reader reader{file, osmium::osm_entity_bits::nwr, osmium::io::read_meta::no};
            osmium::apply(reader, locations, handler, relation_ways);
            reader.close();
            relations.assemble(index, [&handler](const osmium::Area &area) { handler.area(area); });
        }
        std::vector<uint32_t> keys;
        keys.reserve(collector.cells.size());
        for (const auto &entry : collector.cells) keys.push_back(entry.first);
        std::sort(keys.begin(), keys.end());
        // cells.bin: per cell, sorted by key, (key u32, 0 u32, offset u64, length u64) into features.bin.
        std::string directory;
        const std::string folder{output_folder};
        std::ofstream features(folder + "/features.bin", std::ios::binary | std::ios::trunc);
        uint64_t offset = 0;
        for (uint32_t key : keys) {
            const std::string &block = collector.cells[key];
            features.write(block.data(), static_cast<std::streamsize>(block.size()));
            const uint64_t length = block.size();
            const uint32_t zero = 0;
            directory.append(reinterpret_cast<const char *>(&key), 4);
            directory.append(reinterpret_cast<const char *>(&zero), 4);
            directory.append(reinterpret_cast<const char *>(&offset), 8);
            directory.append(reinterpret_cast<const char *>(&length), 8);
            offset += length;
        }
        features.flush();
        if (!features) throw std::runtime_error("cannot write " + folder + "/features.bin: " + std::strerror(errno));
        features.close();
        if (!write_file(folder + "/cells.bin", directory, message)) throw std::runtime_error(message);
        if (!write_file(folder + "/names.tsv", collector.names, message)) throw std::runtime_error(message);
        if (stats) {
            stats->nodes = handler.nodes;
            stats->ways = handler.ways;
            stats->relations = handler.relations;
            stats->features = collector.features;
            stats->names = collector.named;
            stats->cells = keys.size();
            const bool any = collector.features > 0;
            stats->west = any ? collector.min_x / 1e7 : 0;
            stats->south = any ? collector.min_y / 1e7 : 0;
            stats->east = any ? collector.max_x / 1e7 : 0;
            stats->north = any ? collector.max_y / 1e7 : 0;
        }
        return 0;
    } catch (const std::exception &failure) {
        message = failure.what();
    } catch (...) {
        message = "an unknown error";
    }
    if (error && error_capacity > 0) {
        std::snprintf(error, error_capacity, "%s", message.c_str());
    }
    return -1;
}
