// RUN: pallas-opt --list-passes | filecheck %s

// --list-passes lists pallas-ir's passes, then the names of xDSL's passes, which
// pallas-opt also runs (e.g. cse, canonicalize).

// CHECK:      pallas-ir passes:
// CHECK-DAG:  {{^}}  tile-policy: Write the tiling policy's tile sizes
// CHECK-DAG:  {{^}}  xla-outline: Move what the tile policy cannot tile to XLA
// CHECK-DAG:  {{^}}  tile: Tile every `ta.kernel` into a `tl.kernel`
// CHECK:      xDSL passes
// CHECK-DAG:  {{(^| )}}canonicalize{{(,|$)}}
// CHECK-DAG:  {{(^| )}}cse{{(,|$)}}
