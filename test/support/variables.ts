import type { ConfigVariables } from '../../src/series/config.js';

/** The template variables as the RFC names them; unit tests render with these. */
export const RFC_VARIABLES: ConfigVariables = {
  namespace: 'mlx::core::metal',
  class_name: 'MetalStorageView',
  status_enum: 'StorageExportStatus',
  options_struct: 'StorageExportOptions',
  try_export_function: 'try_export_metal_storage',
  export_function: 'export_metal_storage',
  header_path: 'mlx/backend/metal/storage_view.h',
  source_path: 'mlx/backend/metal/storage_view.cpp',
  metal_test_file: 'tests/metal_storage_view_tests.cpp',
  stub_test_file: 'tests/storage_view_tests.cpp',
  docs_section_title: 'Borrowing Metal Storage',
  copyright_year: '2026',
};
