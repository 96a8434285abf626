; Outline of a Go file. Capture names are described in python.scm.

(package_clause (package_identifier) @package)

(function_declaration name: (identifier) @name) @definition.function

(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      type: [
        (type_identifier) @scope
        (pointer_type (type_identifier) @scope)
        (generic_type type: (type_identifier) @scope)
        (pointer_type (generic_type type: (type_identifier) @scope))
      ]))
  name: (field_identifier) @name) @definition.method

; A type spec is a `type` unless one of the two more specific patterns below matches it.
(type_spec name: (type_identifier) @name) @definition.type

(type_alias name: (type_identifier) @name) @definition.type

(type_spec name: (type_identifier) @name type: (struct_type)) @definition.struct

(type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface

(type_alias name: (type_identifier) @name type: (interface_type)) @definition.interface

; Methods of named interfaces only (not of `interface{ M() }` written inline).
(type_spec type: (interface_type (method_elem name: (field_identifier) @name) @definition.method))

(type_alias type: (interface_type (method_elem name: (field_identifier) @name) @definition.method))

; One match per name of `const a, b = 1, 2` (a field written as `name:` matches the first only).
(source_file (const_declaration (const_spec (identifier) @name) @definition.constant))

(import_spec path: (_) @spec) @import.go
