import {
  AppShell,
  Badge,
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
  VisuallyHidden,
} from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { getDisplayString, type HearthClient } from '@hearth/core';
import {
  countUnreadMessages,
  countUnreviewed,
  getResourceTypes,
  HearthProvider,
  MESSAGES_CHANGED,
  ResourceAvatar,
  useAsync,
  useHearthContext,
  useMessageStream,
  useMetadata,
} from '@hearth/react';
import { Suspense, useCallback, useEffect, useState, type ReactNode } from 'react';
import { Link, Navigate, Route, Routes, useLocation, useNavigate } from 'react-router';
import { ErrorBoundary } from './components/ErrorBoundary.js';
import { lazyPage } from './lazy-page.js';
import { SignInPage } from './pages/SignInPage.js';
import { isProjectAdmin, isSuperAdmin, useSession } from './session.js';
import { metadataLoader } from './metadata-loader.js';

// Every page but sign-in is a chunk of its own, fetched when first opened: the first load carries
// only the shell and the sign-in form (charts, editors and GraphiQL come with the pages using them).
const HomePage = lazyPage(() => import('./pages/HomePage.js'), 'HomePage');
const SettingsPage = lazyPage(() => import('./pages/SettingsPage.js'), 'SettingsPage');
const RegisterPage = lazyPage(() => import('./pages/RegisterPage.js'), 'RegisterPage');
const ResetPasswordPage = lazyPage(() => import('./pages/ResetPasswordPage.js'), 'ResetPasswordPage');
const SetPasswordPage = lazyPage(() => import('./pages/SetPasswordPage.js'), 'SetPasswordPage');
const SearchPage = lazyPage(() => import('./pages/SearchPage.js'), 'SearchPage');
const CreatePage = lazyPage(() => import('./pages/CreatePage.js'), 'CreatePage');
const ResourcePage = lazyPage(() => import('./pages/ResourcePage.js'), 'ResourcePage');
const EncounterChartPage = lazyPage(() => import('./pages/EncounterChartPage.js'), 'EncounterChartPage');
const ProjectAdminPage = lazyPage(() => import('./admin/ProjectAdminPage.js'), 'ProjectAdminPage');
const BotEditor = lazyPage(() => import('./admin/BotEditor.js'), 'BotEditor');
const SuperAdminPage = lazyPage(() => import('./admin/SuperAdminPage.js'), 'SuperAdminPage');
const AuditLogPage = lazyPage(() => import('./pages/AuditLogPage.js'), 'AuditLogPage');
const MyAccessLogPage = lazyPage(() => import('./pages/MyAccessLogPage.js'), 'MyAccessLogPage');
const ImagingInstancePage = lazyPage(() => import('./pages/ImagingInstancePage.js'), 'ImagingInstancePage');
const GraphiQLPage = lazyPage(() => import('./pages/GraphiQLPage.js'), 'GraphiQLPage');
/** Dispatched by the results inbox when a result is acknowledged (kept here: the page is a lazy chunk). */
const RESULTS_REVIEWED = 'hearth:results-reviewed';
const LabOrderNewPage = lazyPage(() => import('./pages/LabPages.js'), 'LabOrderNewPage');
const LabOrderPage = lazyPage(() => import('./pages/LabPages.js'), 'LabOrderPage');
const LabReportPage = lazyPage(() => import('./pages/LabPages.js'), 'LabReportPage');
const RequisitionPage = lazyPage(() => import('./pages/LabPages.js'), 'RequisitionPage');
const ResultsInboxPage = lazyPage(() => import('./pages/LabPages.js'), 'ResultsInboxPage');
const TasksPage = lazyPage(() => import('./pages/CarePlanPages.js'), 'TasksPage');
const MessagesPage = lazyPage(() => import('./pages/MessagesPage.js'), 'MessagesPage');
const SchedulePage = lazyPage(() => import('./pages/SchedulingPages.js'), 'SchedulePage');
const BookPage = lazyPage(() => import('./pages/SchedulingPages.js'), 'BookPage');
const GuidesNotBuiltPage = lazyPage(() => import('./pages/GuidesNotBuiltPage.js'), 'GuidesNotBuiltPage');

export function App({ client }: { client: HearthClient }): ReactNode {
  const navigate = useNavigate();
  const go = useCallback((to: string) => navigate(to), [navigate]);
  return (
    <HearthProvider client={client} metadata={metadataLoader} navigate={go}>
      <Suspense fallback={<PageLoader />}>
        <Routes>
          <Route path="/signin" element={<SignInPage />} />
          <Route path="/register" element={<RegisterPage />} />
          <Route path="/resetpassword" element={<ResetPasswordPage />} />
          <Route path="/setpassword/:id/:secret" element={<SetPasswordPage />} />
          {/* Public, like the guides: reached only when the server has no built documentation site to serve there. */}
          <Route path="/docs/*" element={<GuidesNotBuiltPage />} />
          <Route path="/*" element={<SignedIn />} />
        </Routes>
      </Suspense>
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
              <Text fw={700} size="lg" c="ember.7">
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
              <UnstyledButton>
                <Group gap="xs" wrap="nowrap">
                  <VisuallyHidden>Account menu</VisuallyHidden>
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
              <Menu.Item component={Link} to="/settings">
                Settings
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
          {profile.resourceType === 'Patient' ? (
            <NavLink
              label="Book an appointment"
              component={Link}
              to="/book"
              active={location.pathname.startsWith('/book')}
              onClick={close}
            />
          ) : (
            <NavLink
              label="Schedule"
              component={Link}
              to="/schedule"
              active={location.pathname.startsWith('/schedule')}
              onClick={close}
            />
          )}
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
          {PEOPLE.includes(profile.resourceType) && (
            <MessagesLink
              me={`${profile.resourceType}/${profile.id}`}
              active={location.pathname.startsWith('/messages')}
              onClick={close}
            />
          )}
          {profile.resourceType === 'Practitioner' && (
            <NavLink
              label="Tasks"
              component={Link}
              to="/tasks"
              active={location.pathname.startsWith('/tasks')}
              onClick={close}
            />
          )}
          {profile.resourceType === 'Practitioner' && (
            <InboxLink
              practitionerId={profile.id as string}
              active={location.pathname.startsWith('/labs/inbox')}
              onClick={close}
            />
          )}
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
          <Suspense fallback={<PageLoader />}>
            <Routes>
              <Route path="/" element={<HomePage />} />
              <Route path="/admin/super" element={<SuperAdminPage />} />
              <Route path="/graphiql" element={<GraphiQLPage />} />
              <Route path="/settings" element={<SettingsPage />} />
              <Route path="/audit" element={<AuditLogPage />} />
              <Route path="/my-access" element={<MyAccessLogPage />} />
              {/* Explicit paths: they must outrank '/:resourceType/:id/:tab?'. App paths differ from the API's /admin/projects/... */}
              <Route path="/admin/bots/:id" element={<BotEditor />} />
              <Route path="/admin/:tab?" element={<ProjectAdminPage />} />
              <Route path="/Patient/:patientId/encounter/:encounterId" element={<EncounterChartPage />} />
              <Route path="/ImagingStudy/:studyId/instance/:instanceUid" element={<ImagingInstancePage />} />
              <Route path="/Patient/:patientId/labs/new" element={<LabOrderNewPage />} />
              <Route path="/labs/inbox" element={<ResultsInboxPage />} />
              <Route path="/tasks" element={<TasksPage />} />
              <Route path="/labs/order/:id" element={<LabOrderPage />} />
              <Route path="/labs/order/:id/requisition" element={<RequisitionPage />} />
              <Route path="/labs/report/:id" element={<LabReportPage />} />
              <Route path="/messages/:threadId?" element={<MessagesPage />} />
              <Route path="/schedule" element={<SchedulePage />} />
              <Route path="/book" element={<BookPage />} />
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

/**
 * The navigation's link to the results inbox, with the number of results awaiting review (counted
 * again on each page change, so acknowledging one lowers it).
 */
function InboxLink({
  practitionerId,
  active,
  onClick,
}: {
  practitionerId: string;
  active: boolean;
  onClick: () => void;
}): ReactNode {
  const { client } = useHearthContext();
  const location = useLocation();
  const [reviewed, setReviewed] = useState(0);
  useEffect(() => {
    const bump = () => setReviewed((n) => n + 1);
    window.addEventListener(RESULTS_REVIEWED, bump);
    return () => window.removeEventListener(RESULTS_REVIEWED, bump);
  }, []);
  const count = useAsync(
    () => countUnreviewed(client, { reference: `Practitioner/${practitionerId}` }),
    `${practitionerId}${location.pathname}${location.key}/${reviewed}`,
  );
  const unread = count.data ?? 0;
  return (
    <NavLink
      label="Results inbox"
      component={Link}
      to="/labs/inbox"
      active={active}
      onClick={onClick}
      rightSection={
        unread > 0 ? (
          <Badge size="sm" color="red" circle={unread < 10} aria-label={`${unread} unreviewed`}>
            {unread}
          </Badge>
        ) : undefined
      }
    />
  );
}

/** Profiles that send and receive messages. */
const PEOPLE = ['Patient', 'Practitioner', 'RelatedPerson'];

/**
 * The navigation's link to the messages, with how many are unread: counted again when a message
 * arrives (live, over the websocket), when messages are read or sent here, and on page changes.
 */
function MessagesLink({ me, active, onClick }: { me: string; active: boolean; onClick: () => void }): ReactNode {
  const { client } = useHearthContext();
  const location = useLocation();
  const [changes, setChanges] = useState(0);
  useEffect(() => {
    const bump = () => setChanges((n) => n + 1);
    window.addEventListener(MESSAGES_CHANGED, bump);
    return () => window.removeEventListener(MESSAGES_CHANGED, bump);
  }, []);
  useMessageStream(me, () => setChanges((n) => n + 1));
  const count = useAsync(() => countUnreadMessages(client, me), `${me}${location.pathname}/${changes}`);
  const unread = count.data ?? 0;
  return (
    <NavLink
      label="Messages"
      component={Link}
      to="/messages"
      active={active}
      onClick={onClick}
      aria-label={unread > 0 ? `Messages, ${unread} unread` : 'Messages'}
      rightSection={
        unread > 0 ? (
          <Badge size="sm" color="red" circle={unread < 10} aria-hidden>
            {unread}
          </Badge>
        ) : undefined
      }
    />
  );
}

function PageLoader(): ReactNode {
  return (
    <Center p="xl">
      <Loader aria-label="Loading page" />
    </Center>
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
