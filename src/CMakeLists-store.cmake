# Records, traces and the HDF5 results file. Included from src/CMakeLists.txt.
# Each third-party library has one home: jansson's JSON and our base64 in the
# record, <zstd.h> only in the trace writer, <hdf5.h> only in the store. Their
# include directories are PRIVATE so nobody else can include them.

# engicore_record: struct record and its one JSON form (wire and journal),
# the registry of secrets every writer scrubs with, and text made safe. Its
# fields and outcomes are engi/schema.h's lists (libengianalysis).
add_library(engicore_record STATIC
  ${CMAKE_CURRENT_LIST_DIR}/core/record.c
  ${CMAKE_CURRENT_LIST_DIR}/core/base64.c
  ${CMAKE_CURRENT_LIST_DIR}/core/secrets.c
  ${CMAKE_CURRENT_LIST_DIR}/core/text.c
)
target_include_directories(engicore_record PUBLIC ${CMAKE_CURRENT_LIST_DIR}/core)
target_link_libraries(engicore_record PUBLIC engiverify engianalysis
  PRIVATE PkgConfig::JANSSON Threads::Threads)

# engitrace: an episode's JSON-lines trace, zstd-compressed.
add_library(engitrace STATIC ${CMAKE_CURRENT_LIST_DIR}/trace/trace.c)
target_include_directories(engitrace PUBLIC ${CMAKE_CURRENT_LIST_DIR}/trace)
target_link_libraries(engitrace PUBLIC engikernels PkgConfig::JANSSON
  PRIVATE engicore_record PkgConfig::ZSTD)

# engistore: the results file (engicore for its file copy). The parallel HDF5 headers include <mpi.h>,
# hence MPI::MPI_C even though the store itself is a single serial writer.
add_library(engistore STATIC
  ${CMAKE_CURRENT_LIST_DIR}/store/store_hdf5.c
  ${CMAKE_CURRENT_LIST_DIR}/store/store_file.c
  ${CMAKE_CURRENT_LIST_DIR}/store/store_rows.c
  ${CMAKE_CURRENT_LIST_DIR}/store/store_read.c
)
target_include_directories(engistore PUBLIC ${CMAKE_CURRENT_LIST_DIR}/store)
target_include_directories(engistore PRIVATE ${HDF5_INCLUDE_DIRS})
if(HDF5_DEFINITIONS)
  target_compile_definitions(engistore PRIVATE ${HDF5_DEFINITIONS})
endif()
target_link_libraries(engistore PUBLIC engianalysis engicore_record
  PRIVATE engitrace engicore ${HDF5_C_LIBRARIES} MPI::MPI_C)
