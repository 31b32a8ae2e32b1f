#ifndef TRAIL_OSM_INDEX_H
#define TRAIL_OSM_INDEX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What one indexing read: counts, and the extent of the kept features in degrees.
typedef struct {
    uint64_t nodes;
    uint64_t ways;
    uint64_t relations;
    uint64_t features;
    uint64_t names;
    uint64_t cells;
    double west;
    double south;
    double east;
    double north;
} trail_osm_index_stats;

/// Reads every extract of `inputs` (`.osm.pbf` or `.osm`) once and writes the map features the basemap draws into
/// `output_folder` (which must exist and be empty): `features.bin`, `cells.bin` and `names.tsv`, laid out as
/// `OpenMap/OSMIndex.swift` reads them. Returns 0, or -1 with a message in `error` (a corrupt or truncated file,
/// a write that failed). Never throws: every C++ exception is caught here.
int trail_osm_index_build(
    const char *const *inputs,
    int input_count,
    const char *output_folder,
    double cell_degrees,
    trail_osm_index_stats *stats,
    char *error,
    size_t error_capacity
);

#ifdef __cplusplus
}
#endif

#endif
