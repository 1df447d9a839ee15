// RUN: pallas-opt --list-passes | filecheck %s

// --list-passes lists pallas-ir's passes, then the names of xDSL's passes, which
// pallas-opt also runs (e.g. cse, canonicalize).

// CHECK:      pallas-ir passes:
// CHECK:      xDSL passes
// CHECK-DAG:  {{(^| )}}canonicalize{{(,|$)}}
// CHECK-DAG:  {{(^| )}}cse{{(,|$)}}
