-- The read API's role: SELECT only (threadline-migrate grants it on every table).
CREATE ROLE threadline_reader LOGIN PASSWORD 'threadline_reader';
