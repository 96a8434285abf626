; Outline of a Python file. Capture names (shared by every language):
;   @definition.<kind> the definition node, @name its name, @scope an extra qualifier;
;   @import.<kind> an import statement, @spec the imported module when the pattern finds it;
;   @package the declared package. Referenced names come from lexing, not from the query.
; When two patterns capture the same definition node, the later pattern wins.

(class_definition name: (identifier) @name) @definition.class

(function_definition name: (identifier) @name) @definition.function

((module
  (expression_statement
    (assignment left: (identifier) @name)) @definition.constant)
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))

(import_statement) @import.python

(import_from_statement) @import.python
