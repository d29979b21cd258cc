import {
  AppShell,
  Burger,
  Button,
  Center,
  Group,
  Loader,
  Menu,
  NavLink,
  ScrollArea,
  Select,
  Text,
  UnstyledButton,
} from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { getDisplayString, type HearthClient } from '@hearth/core';
import { getResourceTypes, HearthProvider, ResourceAvatar, useHearthContext, useMetadata } from '@hearth/react';
import { lazy, Suspense, useCallback, type ReactNode } from 'react';
import { Link, Navigate, Route, Routes, useLocation, useNavigate } from 'react-router';
import { ErrorBoundary } from './components/ErrorBoundary.js';
import { CreatePage } from './pages/CreatePage.js';
import { RegisterPage } from './pages/RegisterPage.js';
import { ResetPasswordPage } from './pages/ResetPasswordPage.js';
import { ResourcePage } from './pages/ResourcePage.js';
import { SearchPage } from './pages/SearchPage.js';
import { SetPasswordPage } from './pages/SetPasswordPage.js';
import { SignInPage } from './pages/SignInPage.js';
import { isProjectAdmin, isSuperAdmin, useSession } from './session.js';

// Admin screens (with the code editor) load on first use.
const ProjectAdminPage = lazy(() =>
  import('./admin/ProjectAdminPage.js').then((m) => ({ default: m.ProjectAdminPage })),
);
const BotEditor = lazy(() => import('./admin/BotEditor.js').then((m) => ({ default: m.BotEditor })));
const SuperAdminPage = lazy(() => import('./admin/SuperAdminPage.js').then((m) => ({ default: m.SuperAdminPage })));
// GraphiQL (and its editor) is a chunk of its own, fetched from this server when first opened.
const GraphiQLPage = lazy(() => import('./pages/GraphiQLPage.js').then((m) => ({ default: m.GraphiQLPage })));

const loadMetadata = () => import('virtual:hearth-metadata').then((m) => m.default);

export function App({ client }: { client: HearthClient }): ReactNode {
  const navigate = useNavigate();
  const go = useCallback((to: string) => navigate(to), [navigate]);
  return (
    <HearthProvider client={client} metadata={loadMetadata} navigate={go}>
      <Routes>
        <Route path="/signin" element={<SignInPage />} />
        <Route path="/register" element={<RegisterPage />} />
        <Route path="/resetpassword" element={<ResetPasswordPage />} />
        <Route path="/setpassword/:id/:secret" element={<SetPasswordPage />} />
        <Route path="/*" element={<SignedIn />} />
      </Routes>
    </HearthProvider>
  );
}

const QUICK_LINKS = ['Patient', 'Practitioner', 'Observation', 'Encounter', 'Questionnaire', 'QuestionnaireResponse'];

/** Everything behind sign-in, in the app shell. */
function SignedIn(): ReactNode {
  const { profile, loading, client, refreshSession } = useHearthContext();
  const location = useLocation();
  const navigate = useNavigate();
  const metadata = useMetadata();
  const { details } = useSession();
  const [opened, { toggle, close }] = useDisclosure();
  if (loading) {
    return (
      <Center h="100vh">
        <Loader aria-label="Loading session" />
      </Center>
    );
  }
  if (!profile) {
    const next = location.pathname + location.search;
    return <Navigate to={`/signin${next !== '/' ? `?next=${encodeURIComponent(next)}` : ''}`} replace />;
  }
  const types = metadata ? getResourceTypes(metadata) : QUICK_LINKS;
  return (
    <AppShell
      header={{ height: 56 }}
      navbar={{ width: 220, breakpoint: 'md', collapsed: { mobile: !opened } }}
      padding="md"
    >
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group wrap="nowrap">
            <Burger opened={opened} onClick={toggle} hiddenFrom="md" size="sm" aria-label="Toggle navigation" />
            <UnstyledButton component={Link} to="/" aria-label="Hearth home">
              <Text fw={700} size="lg" c="orange.7">
                Hearth
              </Text>
            </UnstyledButton>
            <Select
              aria-label="Go to resource type"
              placeholder="Resource type…"
              searchable
              data={types}
              value={null}
              w={220}
              visibleFrom="sm"
              onChange={(t) => t && navigate(`/${t}`)}
            />
          </Group>
          <Menu position="bottom-end">
            <Menu.Target>
              <UnstyledButton aria-label="Account menu">
                <Group gap="xs" wrap="nowrap">
                  <ResourceAvatar value={profile} size="sm" />
                  <Text size="sm" visibleFrom="sm">
                    {getDisplayString(profile)}
                  </Text>
                </Group>
              </UnstyledButton>
            </Menu.Target>
            <Menu.Dropdown>
              <Menu.Label>{details?.project?.name ?? 'Project'}</Menu.Label>
              <Menu.Item component={Link} to={`/${profile.resourceType}/${profile.id}`}>
                Profile
              </Menu.Item>
              <Menu.Item
                color="red"
                onClick={async () => {
                  await client.signOut();
                  await refreshSession();
                  navigate('/signin');
                }}
              >
                Sign out
              </Menu.Item>
            </Menu.Dropdown>
          </Menu>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label="Main navigation">
        <ScrollArea>
          {QUICK_LINKS.map((t) => (
            <NavLink
              key={t}
              label={t}
              component={Link}
              to={`/${t}`}
              active={location.pathname.startsWith(`/${t}`)}
              onClick={close}
            />
          ))}
          <NavLink
            label="GraphiQL"
            component={Link}
            to="/graphiql"
            active={location.pathname.startsWith('/graphiql')}
            onClick={close}
          />
          {isProjectAdmin(details) && (
            <NavLink
              label="Project admin"
              component={Link}
              to="/admin/project"
              active={location.pathname.startsWith('/admin') && !location.pathname.startsWith('/admin/super')}
              onClick={close}
            />
          )}
          {isSuperAdmin(details) && (
            <NavLink
              label="Super admin"
              component={Link}
              to="/admin/super"
              active={location.pathname.startsWith('/admin/super')}
              onClick={close}
            />
          )}
        </ScrollArea>
      </AppShell.Navbar>
      <AppShell.Main>
        <ErrorBoundary resetKey={location.pathname}>
          <Suspense fallback={<Loader aria-label="Loading page" />}>
            <Routes>
              <Route path="/" element={<Navigate to="/Patient" replace />} />
              <Route path="/admin/super" element={<SuperAdminPage />} />
              <Route path="/graphiql" element={<GraphiQLPage />} />
              {/* Explicit paths: they must outrank '/:resourceType/:id/:tab?'. App paths differ from the API's /admin/projects/... */}
              <Route path="/admin/bots/:id" element={<BotEditor />} />
              <Route path="/admin/:tab?" element={<ProjectAdminPage />} />
              <Route path="/:resourceType" element={<SearchPage />} />
              <Route path="/:resourceType/new" element={<CreatePage />} />
              <Route path="/:resourceType/:id/:tab?" element={<ResourcePage />} />
              <Route path="*" element={<NotFound />} />
            </Routes>
          </Suspense>
        </ErrorBoundary>
      </AppShell.Main>
    </AppShell>
  );
}

function NotFound(): ReactNode {
  return (
    <Center p="xl">
      <Group>
        <Text>Page not found.</Text>
        <Button component={Link} to="/">
          Home
        </Button>
      </Group>
    </Center>
  );
}
