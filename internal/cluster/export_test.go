package cluster

// SetRepairRead sets a function Repair's forced pass runs between reading
// the queues' state and writing the index.
func SetRepairRead(f *Frontier, fn func()) { f.repairRead = fn }
