-- ActiveGrade schema version 1 as created by the code of commit 7c19cbd (postgresql),
-- generated from its SQLAlchemy models with CreateTable/CreateIndex; used by tests/test_migrations.py

CREATE TABLE projects (
	id SERIAL NOT NULL, 
	name VARCHAR(200) NOT NULL, 
	created_at TIMESTAMP WITH TIME ZONE NOT NULL, 
	settings JSON NOT NULL, 
	status VARCHAR(20) NOT NULL, 
	progress_done INTEGER NOT NULL, 
	progress_total INTEGER NOT NULL, 
	progress_message TEXT NOT NULL, 
	error TEXT NOT NULL, 
	updated_at TIMESTAMP WITH TIME ZONE NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE (name)
);

CREATE TABLE schema_version (
	version SERIAL NOT NULL, 
	PRIMARY KEY (version)
);

CREATE TABLE grades (
	id SERIAL NOT NULL, 
	project_id INTEGER NOT NULL, 
	position INTEGER NOT NULL, 
	value FLOAT NOT NULL, 
	label VARCHAR(200) NOT NULL, 
	grader VARCHAR(200) NOT NULL, 
	comment TEXT NOT NULL, 
	seconds FLOAT, 
	created_at TIMESTAMP WITH TIME ZONE NOT NULL, 
	retracted_at TIMESTAMP WITH TIME ZONE, 
	PRIMARY KEY (id), 
	FOREIGN KEY(project_id) REFERENCES projects (id) ON DELETE CASCADE
);

CREATE INDEX ix_grades_project_position ON grades (project_id, position);

CREATE TABLE input_files (
	id SERIAL NOT NULL, 
	project_id INTEGER NOT NULL, 
	role VARCHAR(20) NOT NULL, 
	name VARCHAR(500) NOT NULL, 
	content BYTEA NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE (project_id, role), 
	FOREIGN KEY(project_id) REFERENCES projects (id) ON DELETE CASCADE
);

CREATE TABLE items (
	project_id INTEGER NOT NULL, 
	position INTEGER NOT NULL, 
	item_id VARCHAR(500) NOT NULL, 
	stratum INTEGER NOT NULL, 
	data JSON NOT NULL, 
	PRIMARY KEY (project_id, position), 
	FOREIGN KEY(project_id) REFERENCES projects (id) ON DELETE CASCADE
);

CREATE TABLE skips (
	id SERIAL NOT NULL, 
	project_id INTEGER NOT NULL, 
	position INTEGER NOT NULL, 
	grader VARCHAR(200) NOT NULL, 
	created_at TIMESTAMP WITH TIME ZONE NOT NULL, 
	PRIMARY KEY (id), 
	FOREIGN KEY(project_id) REFERENCES projects (id) ON DELETE CASCADE
);

CREATE INDEX ix_skips_project_position ON skips (project_id, position);

INSERT INTO schema_version (version) VALUES (1);
