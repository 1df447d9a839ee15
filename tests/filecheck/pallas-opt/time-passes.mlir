// RUN: pallas-opt %s -p cse --time-passes 2>&1 >/dev/null | filecheck %s --check-prefix=TIME
// RUN: pallas-opt %s -p cse --time-passes 2>/dev/null | filecheck %s --check-prefix=OUT

// --time-passes prints a timing report to stderr, with a row for the pass (and for
// parsing, verification and output); stdout holds only the IR.
func.func @forward(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  func.return %x : tensor<8x128xf32>
}

// TIME-NOT:  builtin.module
// TIME:      Pass execution timing report
// TIME:      Total Execution Time: {{[0-9.]+}} seconds
// TIME:      ----Wall Time----  ----Name----
// TIME-DAG:  {{[0-9.]+}} ({{ *[0-9.]+}}%)  (parse)
// TIME-DAG:  {{[0-9.]+}} ({{ *[0-9.]+}}%)  cse
// TIME:      {{[0-9.]+}} (100.0%)  Total
// TIME-NOT:  builtin.module

// OUT-NOT:   timing report
// OUT:       builtin.module {
// OUT-NEXT:    func.func @forward
// OUT-NOT:   Wall Time
