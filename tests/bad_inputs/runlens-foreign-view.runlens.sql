-- A view RunLens does not create.
CREATE VIEW notes AS SELECT name FROM node;
