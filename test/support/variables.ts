import { templateVariables } from '../../src/series/config.js';

/** The storage view series' own variables, as the RFC names them. */
export const RFC_OWN_VARIABLES: Record<string, string> = {
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

/** Its derived variables, as the shipped config declares them. */
export const RFC_DERIVED = {
  header_include: { copy: 'header_path' },
  source_file: { basename: 'source_path' },
  metal_test_source: { basename: 'metal_test_file' },
  stub_test_source: { basename: 'stub_test_file' },
  docs_section_underline: { underline: 'docs_section_title', with: '-' },
};

/** Every declared variable with its value; unit tests render with these. */
export const RFC_VARIABLES = templateVariables({ variables: RFC_OWN_VARIABLES, derived: RFC_DERIVED });
