#!/usr/bin/env python3
"""Writes a synthetic OpenStreetMap extract as OSM XML on standard output, for the basemap's benchmark.

Real-shaped: the area is cut into 1 km cells and every cell holds what a settled rural district holds per square
kilometre: about 150 buildings, roads and tracks, footpaths, a wood, a stream, a pond, a few named points (a peak,
a viewpoint, parking, toilets, a shelter) and ways the map leaves out (fences, power lines). Every cell's second wood
is a multipolygon relation with a clearing, of untagged member ways, and every fourth cell has a lake with an island
drawn the same way. Ids are as sparse as OpenStreetMap's: each feature's nodes are numbered one after the other, as
one edit creates them, and the next feature's start thousands of ids further on. Pipe it through
`osmium cat -F osm -o extract.osm.pbf` to get the `.osm.pbf` the server indexes.

    synthetic-osm-extract.py --west -122.6 --south 44.0 --columns 90 --rows 90 > extract.osm
"""
import argparse
import math
import random
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--west', type=float, default=-122.6)
    parser.add_argument('--south', type=float, default=44.0)
    parser.add_argument('--columns', type=int, default=10)
    parser.add_argument('--rows', type=int, default=10)
    parser.add_argument('--seed', type=int, default=7)
    args = parser.parse_args()
    random.seed(args.seed)
    out = sys.stdout
    write = out.write
    write("<?xml version='1.0' encoding='UTF-8'?>\n<osm version=\"0.6\" generator=\"synthetic-extract\">\n")
    # Ids in the order osmium expects: every node first, then the ways, then the relations.
    node_id = 0
    ways = []
    relations = []
    cell_lat = 1 / 111.32
    for row in range(args.rows):
        south = args.south + row * cell_lat
        cell_lon = cell_lat / math.cos(math.radians(south))
        for column in range(args.columns):
            west = args.west + column * cell_lon
            cell = f'{row}-{column}'

            def node(lon, lat, tags=()):
                nonlocal node_id
                node_id += 1
                # Version, changeset and timestamp as a downloaded extract carries them (they are most of its bytes).
                meta = f'version="{random.randint(1, 9)}" changeset="{random.randint(1, 150000000)}" timestamp="20{random.randint(10, 25)}-0{random.randint(1, 9)}-1{random.randint(0, 9)}T12:00:00Z"'
                if tags:
                    write(f' <node id="{node_id}" {meta} lat="{lat:.7f}" lon="{lon:.7f}">')
                    for k, v in tags:
                        write(f'<tag k="{k}" v="{v}"/>')
                    write('</node>\n')
                else:
                    write(f' <node id="{node_id}" {meta} lat="{lat:.7f}" lon="{lon:.7f}"/>\n')
                return node_id

            def jump():
                nonlocal node_id
                node_id += random.randint(1, 10000)

            def line(points, tags):
                jump()
                ways.append(([node(lon, lat) for lon, lat in points], tags))

            def ring(cx, cy, rx, ry, count, tags):
                jump()
                ids = [node(cx + rx * math.cos(2 * math.pi * i / count) * (0.8 + 0.2 * random.random()),
                            cy + ry * math.sin(2 * math.pi * i / count) * (0.8 + 0.2 * random.random())) for i in range(count)]
                ways.append((ids + [ids[0]], tags))
                return len(ways)

            def multipolygon(cx, cy, rx, ry, count, tags):
                outer = ring(cx, cy, rx, ry, count, [])
                inner = ring(cx, cy, rx * 0.3, ry * 0.3, count // 3, [])
                relations.append(([(outer, 'outer'), (inner, 'inner')], [('type', 'multipolygon')] + tags))

            def wander(count, step):
                lon, lat = west + random.random() * cell_lon, south + random.random() * cell_lat
                heading = random.random() * 2 * math.pi
                points = []
                for _ in range(count):
                    points.append((lon, lat))
                    heading += random.uniform(-0.4, 0.4)
                    lon += math.cos(heading) * step * cell_lon
                    lat += math.sin(heading) * step * cell_lat
                return points

            for _ in range(150):
                cx, cy = west + random.random() * cell_lon, south + random.random() * cell_lat
                ring(cx, cy, cell_lon * 0.006, cell_lat * 0.005, 4, [('building', 'yes')])
            for kind, count in (('residential', 3), ('track', 3), ('unclassified', 1), ('secondary', 1)):
                for i in range(count):
                    line(wander(25, 0.04), [('highway', kind), ('name', f'{kind.title()} Road {cell}-{i}')])
            for i in range(6):
                line(wander(30, 0.03), [('highway', random.choice(['path', 'footway', 'steps', 'cycleway'])), ('name', f'Trail {cell}-{i}')])
            ring(west + cell_lon * 0.5, south + cell_lat * 0.5, cell_lon * 0.3, cell_lat * 0.25, 60, [('landuse', 'forest'), ('name', f'Wood {cell}')])
            ring(west + cell_lon * 0.2, south + cell_lat * 0.8, cell_lon * 0.06, cell_lat * 0.05, 30, [('natural', 'water'), ('name', f'Pond {cell}')])
            multipolygon(west + cell_lon * 0.75, south + cell_lat * 0.75, cell_lon * 0.15, cell_lat * 0.12, 40,
                         [('natural', 'wood'), ('name', f'Clearing Wood {cell}')])
            if (row + column) % 4 == 0:
                multipolygon(west + cell_lon * 0.3, south + cell_lat * 0.35, cell_lon * 0.12, cell_lat * 0.1, 45,
                             [('natural', 'water'), ('name', f'Island Lake {cell}')])
            line(wander(40, 0.03), [('waterway', 'stream'), ('name', f'Creek {cell}')])
            for i in range(8):
                line(wander(12, 0.03), [('barrier', 'fence')])
            line(wander(10, 0.1), [('power', 'line')])
            jump()
            node(west + cell_lon * 0.7, south + cell_lat * 0.3, [('natural', 'peak'), ('name', f'Peak {cell}'), ('ele', str(300 + row + column))])
            node(west + cell_lon * 0.4, south + cell_lat * 0.6, [('tourism', 'viewpoint'), ('name', f'View {cell}')])
            node(west + cell_lon * 0.1, south + cell_lat * 0.1, [('amenity', 'parking'), ('name', f'Parking {cell}')])
            node(west + cell_lon * 0.15, south + cell_lat * 0.12, [('amenity', 'toilets')])
            node(west + cell_lon * 0.9, south + cell_lat * 0.9, [('amenity', 'shelter'), ('name', f'Shelter {cell}')])
    for way_id, (refs, tags) in enumerate(ways, start=1):
        write(f' <way id="{way_id}" version="{random.randint(1, 9)}" changeset="{random.randint(1, 150000000)}" timestamp="2021-06-1{random.randint(0, 9)}T12:00:00Z">')
        write(''.join(f'<nd ref="{ref}"/>' for ref in refs))
        for k, v in tags:
            write(f'<tag k="{k}" v="{v}"/>')
        write('</way>\n')
    for relation_id, (members, tags) in enumerate(relations, start=1):
        write(f' <relation id="{relation_id}" version="{random.randint(1, 9)}" changeset="{random.randint(1, 150000000)}" timestamp="2022-03-1{random.randint(0, 9)}T12:00:00Z">')
        write(''.join(f'<member type="way" ref="{ref}" role="{role}"/>' for ref, role in members))
        for k, v in tags:
            write(f'<tag k="{k}" v="{v}"/>')
        write('</relation>\n')
    write('</osm>\n')


if __name__ == '__main__':
    main()
