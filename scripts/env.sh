# Sourced by the other scripts: the settings Open MPI needs here.
# As root, mpirun refuses to start without both variables; with more ranks
# than cores, oversubscription must be allowed and idle ranks must yield, or
# they busy-poll and a sweep runs about a hundred times slower.
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_mpi_yield_when_idle=1
# a container without a network device: keep Open MPI off the wire
export OMPI_MCA_btl=self,vader
export OMPI_MCA_btl_vader_single_copy_mechanism=none
